// MCP's HTTP+SSE transport (protocol revision 2024-11-05): a GET of the server's URL opens an event stream whose
// first `endpoint` event names where to POST; each JSON-RPC message is POSTed there (answered 202), and the
// server's answers and requests come back as `message` events on the stream.
import { McpError, PendingRequests, REQUEST_TIMEOUT_MS, type McpConnection, type RpcMessage } from './mcp-rpc.ts';
import { dialFromWorker, type HttpDial } from './mcp-relay.ts';
import { sseEvents } from './sse-events.ts';

export const SSE_VERSION = '2024-11-05';

/**
 * Where to POST: the endpoint the server named (usually a path with a session id), resolved against the
 * stream's URL, on the origin the worker reached the stream at. A server names itself as the task knows it
 * (`http://mcp:8000/messages?…`), a name only the group's network resolves; the MCP SDKs refuse an endpoint of
 * another origin anyway, so the path and query are all that can differ.
 */
export function postUrlOf(streamUrl: string, endpoint: string): string {
  const stream = new URL(streamUrl);
  const named = new URL(endpoint.trim(), stream);
  return new URL(`${named.pathname}${named.search}`, stream.origin).toString();
}

export class SseConnection implements McpConnection {
  private readonly pending = new PendingRequests();

  private constructor(private readonly endpoint: string, private readonly stream: AbortController, private readonly dial: HttpDial) {}

  /** Opens the stream and waits for its `endpoint` event. */
  static async open(url: string, signal?: AbortSignal, dial: HttpDial = dialFromWorker): Promise<SseConnection> {
    const stream = new AbortController();
    const abort = () => stream.abort(signal?.reason);
    signal?.addEventListener('abort', abort, { once: true });
    // The stream lives as long as the connection; only the wait for its endpoint has a deadline.
    let late = false;
    const deadline = setTimeout(() => { late = true; stream.abort(); }, REQUEST_TIMEOUT_MS);
    try {
      const res = await dial(url, { headers: { accept: 'text/event-stream' }, signal: stream.signal });
      if (!res.ok || !res.body) throw new McpError(`GET ${url} answered HTTP ${res.status}: ${(await res.text()).slice(0, 300)}`);
      if (!(res.headers.get('content-type') ?? '').includes('text/event-stream')) {
        throw new McpError(`GET ${url} answered ${res.headers.get('content-type') ?? 'no content type'}, not an event stream (a streamable-http server? set transport = "streamable-http")`);
      }
      const events = sseEvents(res.body)[Symbol.asyncIterator]();
      for (let next = await events.next(); !next.done; next = await events.next()) {
        if (next.value.event !== 'endpoint') continue;
        const conn = new SseConnection(postUrlOf(url, next.value.data), stream, dial);
        void conn.read(events).finally(() => signal?.removeEventListener('abort', abort));
        return conn;
      }
      throw new McpError(`the event stream at ${url} ended before its endpoint event`);
    } catch (err) {
      stream.abort();
      signal?.removeEventListener('abort', abort);
      throw late ? new McpError(`the event stream at ${url} sent no endpoint event in ${REQUEST_TIMEOUT_MS / 1000} s`) : err;
    } finally {
      clearTimeout(deadline);
    }
  }

  private async read(events: AsyncIterator<{ event: string; data: string }>): Promise<void> {
    try {
      for (let next = await events.next(); !next.done; next = await events.next()) {
        if (next.value.event !== 'message') continue;
        let msg: RpcMessage;
        try {
          msg = JSON.parse(next.value.data) as RpcMessage;
        } catch {
          continue;
        }
        this.pending.receive(msg, (answer) => void this.post(answer).catch(() => undefined));
      }
      this.pending.end(new McpError('the server closed its event stream'));
    } catch (err) {
      this.pending.end(this.stream.signal.aborted ? new McpError('the connection was closed') : new McpError(`the event stream broke: ${(err as Error).message}`));
    }
  }

  private async post(msg: RpcMessage, signal?: AbortSignal): Promise<void> {
    const res = await this.dial(this.endpoint, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(msg),
      signal: AbortSignal.any([this.stream.signal, AbortSignal.timeout(REQUEST_TIMEOUT_MS), ...(signal ? [signal] : [])]),
    });
    const text = await res.text();
    if (!res.ok) throw new McpError(`${msg.method ?? 'an answer'} POSTed to ${this.endpoint} answered HTTP ${res.status}: ${text.slice(0, 300)}`);
  }

  request(method: string, params: Record<string, unknown>, signal?: AbortSignal, timeoutMs?: number): Promise<Record<string, unknown>> {
    return this.pending.call(method, params, (msg) => this.post(msg, signal), signal, timeoutMs);
  }

  notify(method: string, signal?: AbortSignal): Promise<void> {
    return this.post({ jsonrpc: '2.0', method }, signal);
  }

  async close(): Promise<void> {
    this.stream.abort();
  }
}
