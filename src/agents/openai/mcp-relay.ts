// An http MCP server on main's own loopback (`localhost`, `127.x`, `::1`) or named `main` is reached the way a
// process in main reaches it, not from the worker (issue 22): each HTTP request is one short process in main, a
// python3 relay that makes the request there and streams the answer back on its stdout. The transports keep their
// own code and see an ordinary fetch Response. An sse session pairs up as it would in main: its event stream is one
// relay process that lives while the session is open, and each POST is another, to the same server.
//
// The relay's source travels in its argv (`python3 -c`), not as a file in the sandbox, so the agent cannot rewrite
// it to answer for the server, and there is nothing to upload or find again after a worker restart. What it is
// asked (method, URL, headers, body) goes on its stdin. When the caller ends its stdin (the answer was read, or the
// call gave up, or the worker died and the engine closed the attachment) it exits.
import { McpError, type StdioStarter } from './mcp-rpc.ts';

/** One HTTP request as the transports make it. */
export interface HttpRequest {
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  signal?: AbortSignal;
}

/** Makes one HTTP request and answers as fetch does. */
export type HttpDial = (url: string, req: HttpRequest) => Promise<Response>;

/** From the worker itself. */
export const dialFromWorker: HttpDial = (url, req) => fetch(url, req);

const LOOPBACK = /^(localhost|127(\.\d{1,3}){3}|\[::1\])$/i;

/** Whether a server URL names main itself: its loopback, or its service name. */
export function reachedInMain(url: string): boolean {
  let host: string;
  try {
    host = new URL(url).hostname;
  } catch {
    return false;
  }
  return LOOPBACK.test(host) || host.toLowerCase() === 'main';
}

// Stdin: one line of JSON {method, url, headers, bodyBytes}, then the body. Stdout: one line of JSON, {status,
// headers} or {error}, then the answer's body as it arrives (read1: an event stream's events are not held back).
export const RELAY_SCRIPT = `
import http.client, json, os, sys, threading, urllib.parse
inp, out = sys.stdin.buffer, sys.stdout.buffer
req = json.loads(inp.readline())
body = inp.read(req["bodyBytes"]) if req["bodyBytes"] else None
def until_stdin_ends():
    inp.read()
    os._exit(0)
threading.Thread(target=until_stdin_ends, daemon=True).start()
u = urllib.parse.urlsplit(req["url"])
try:
    conn = (http.client.HTTPSConnection if u.scheme == "https" else http.client.HTTPConnection)(u.hostname, u.port)
    conn.request(req["method"], (u.path or "/") + ("?" + u.query if u.query else ""), body=body, headers=req["headers"])
    res = conn.getresponse()
except Exception as e:
    out.write((json.dumps({"error": type(e).__name__ + ": " + str(e)}) + "\\n").encode()); out.flush(); sys.exit(3)
out.write((json.dumps({"status": res.status, "headers": res.getheaders()}) + "\\n").encode()); out.flush()
while True:
    chunk = res.read1(65536)
    if not chunk:
        break
    out.write(chunk); out.flush()
`;

const STDERR_TAIL = 1000;
const NO_BODY = new Set([204, 205, 304]);

type Head = { status: number; headers: [string, string][] } | { error: string };

/** Requests made from inside main, one relay process each, started as a stdio server is (as the agent user, bounded). */
export function dialThroughMain(start: StdioStarter): HttpDial {
  return async (url, req) => {
    const method = req.method ?? 'GET';
    const proc = await start(['python3', '-c', RELAY_SCRIPT], req.signal);
    let stderr = '';
    proc.stderr.setEncoding('utf8');
    proc.stderr.on('data', (t: string) => { stderr = (stderr + t).slice(-STDERR_TAIL); });
    let finished = false;
    const finish = () => {
      if (finished) return;
      finished = true;
      req.signal?.removeEventListener('abort', finish);
      proc.stdin.end();
      proc.detach();
    };
    req.signal?.addEventListener('abort', finish, { once: true });
    const body = Buffer.from(req.body ?? '', 'utf8');
    proc.stdin.write(`${JSON.stringify({ method, url, headers: req.headers ?? {}, bodyBytes: body.length })}\n`);
    if (body.length > 0) proc.stdin.write(body);

    const chunks = (proc.stdout as AsyncIterable<Buffer>)[Symbol.asyncIterator]();
    let buffered = Buffer.alloc(0);
    while (buffered.indexOf(10) < 0) {
      const next = await chunks.next();
      if (next.done) {
        finish();
        if (req.signal?.aborted) throw req.signal.reason;
        const code = await proc.exited;
        const missing = code === 126 || code === 127 ? ' (a server on main\'s own localhost is reached through python3 in main)' : '';
        throw new McpError(`${method} ${url} from inside main: the relay exited${code === null ? '' : ` with code ${code}`} before answering${missing}${stderr.trim() ? `: ${stderr.trim()}` : ''}`);
      }
      buffered = Buffer.concat([buffered, next.value]);
    }
    const nl = buffered.indexOf(10);
    const head = JSON.parse(buffered.subarray(0, nl).toString('utf8')) as Head;
    if ('error' in head) {
      finish();
      throw new McpError(`${method} ${url} from inside main failed: ${head.error}`);
    }
    if (head.status < 200 || head.status > 599) {
      finish();
      throw new McpError(`${method} ${url} from inside main answered HTTP ${head.status}`);
    }
    if (NO_BODY.has(head.status)) {
      finish();
      return new Response(null, { status: head.status, headers: head.headers });
    }
    let first: Buffer | null = buffered.subarray(nl + 1);
    const stream = new ReadableStream<Uint8Array>({
      async pull(ctrl) {
        if (first) {
          const chunk = first;
          first = null;
          if (chunk.length > 0) { ctrl.enqueue(new Uint8Array(chunk)); return; }
        }
        const next = await chunks.next();
        if (!next.done) { ctrl.enqueue(new Uint8Array(next.value)); return; }
        finish();
        if (req.signal?.aborted) ctrl.error(req.signal.reason);
        else ctrl.close();
      },
      cancel() { finish(); },
    });
    return new Response(stream, { status: head.status, headers: head.headers });
  };
}
