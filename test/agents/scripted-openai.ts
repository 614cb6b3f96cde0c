// A scripted OpenAI-compatible Chat Completions server on 127.0.0.1 for tests: each request gets the next
// reply of the script, and every request is recorded.
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Reply {
  status?: number;
  headers?: Record<string, string>;
  body: unknown;
  /** Wait this long before answering. */
  delayMs?: number;
}

export interface RecordedRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: { model: string; messages: Array<Record<string, unknown>>; tools?: unknown[]; [k: string]: unknown };
}

export interface ScriptedServer {
  baseUrl: string;
  requests: RecordedRequest[];
  close(): Promise<void>;
}

/** `script` is a list of replies, or a function of the request number (0-based) and the request. */
export async function startScriptedServer(script: Reply[] | ((n: number, req: RecordedRequest) => Reply)): Promise<ScriptedServer> {
  const requests: RecordedRequest[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const recorded: RecordedRequest = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as RecordedRequest['body'],
      };
      const n = requests.length;
      requests.push(recorded);
      const reply = typeof script === 'function' ? script(n, recorded) : script[n];
      const r = reply ?? { status: 500, body: { error: { message: 'the test script has no reply left', type: 'server_error', code: null } } };
      const send = (): void => {
        if (res.destroyed) return;
        res.writeHead(r.status ?? 200, { 'content-type': 'application/json', ...r.headers });
        res.end(JSON.stringify(r.body));
      };
      if (r.delayMs) setTimeout(send, r.delayMs).unref();
      else send();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

let seq = 0;

function completion(message: Record<string, unknown>, finishReason: string, usage: [number, number]): Reply {
  seq += 1;
  return {
    body: {
      id: `chatcmpl-scripted-${seq}`,
      object: 'chat.completion',
      created: 1_764_460_800,
      model: 'scripted-model',
      choices: [{ index: 0, message: { role: 'assistant', ...message }, logprobs: null, finish_reason: finishReason }],
      usage: { prompt_tokens: usage[0], completion_tokens: usage[1], total_tokens: usage[0] + usage[1] },
      system_fingerprint: null,
    },
  };
}

export function bashCall(id: string, command: string, usage: [number, number] = [100, 20]): Reply {
  return completion(
    { content: null, tool_calls: [{ id, type: 'function', function: { name: 'bash', arguments: JSON.stringify({ command }) } }] },
    'tool_calls',
    usage,
  );
}

export function finalMessage(text: string, usage: [number, number] = [150, 10]): Reply {
  return completion({ content: text, refusal: null }, 'stop', usage);
}

export const rateLimited: Reply = {
  status: 429,
  headers: { 'retry-after': '0' },
  body: { error: { message: 'Rate limit reached for requests', type: 'requests', param: null, code: 'rate_limit_exceeded' } },
};

export const contextTooLong: Reply = {
  status: 400,
  body: {
    error: {
      message: "This model's maximum context length is 8192 tokens. However, your messages resulted in 9120 tokens. Please reduce the length of the messages.",
      type: 'invalid_request_error',
      param: 'messages',
      code: 'context_length_exceeded',
    },
  },
};

/** vLLM's shape: no OpenAI error code, only the message. */
export const contextTooLongVllm: Reply = {
  status: 400,
  body: {
    object: 'error',
    message: "This model's maximum context length is 4096 tokens. However, you requested 5000 tokens (4900 in the messages, 100 in the completion). Please reduce the length of the messages or completion.",
    type: 'BadRequestError',
    param: null,
    code: 400,
  },
};
