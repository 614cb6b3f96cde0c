// MCP's streamable-http transport (protocol revision 2025-03-26): each JSON-RPC message is a POST to the
// server's one URL, answered as JSON or as an event stream; the server's Mcp-Session-Id is echoed back.
import { McpError, requestSignal, resultOf, type McpConnection, type RpcMessage } from './mcp-rpc.ts';
import { dialFromWorker, type HttpDial } from './mcp-relay.ts';
import { parseSse } from './sse-events.ts';

export const STREAMABLE_HTTP_VERSION = '2025-03-26';

/** The answer with `id` in a POST's body: JSON, or the `message` events of a stream (which may carry others first). */
export function answerInBody(contentType: string, text: string, id: number): RpcMessage {
  if (!contentType.includes('text/event-stream')) return JSON.parse(text) as RpcMessage;
  for (const ev of parseSse(text)) {
    if (ev.event !== 'message') continue;
    const msg = JSON.parse(ev.data) as RpcMessage;
    if (msg.id === id && msg.method === undefined) return msg;
  }
  throw new McpError('the server\'s event stream ended without the answer');
}

export class StreamableHttpConnection implements McpConnection {
  private sessionId: string | undefined;
  private nextId = 1;

  constructor(readonly url: string, private readonly dial: HttpDial = dialFromWorker) {}

  private async post(body: RpcMessage, signal?: AbortSignal, timeoutMs?: number): Promise<Response> {
    const headers: Record<string, string> = {
      'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': STREAMABLE_HTTP_VERSION,
    };
    if (this.sessionId) headers['mcp-session-id'] = this.sessionId;
    const res = await this.dial(this.url, { method: 'POST', headers, body: JSON.stringify(body), signal: requestSignal(signal, timeoutMs) });
    this.sessionId = res.headers.get('mcp-session-id') ?? this.sessionId;
    return res;
  }

  async request(method: string, params: Record<string, unknown>, signal?: AbortSignal, timeoutMs?: number): Promise<Record<string, unknown>> {
    const id = this.nextId++;
    const res = await this.post({ jsonrpc: '2.0', id, method, params }, signal, timeoutMs);
    const text = await res.text();
    if (!res.ok) throw new McpError(`${method} answered HTTP ${res.status}: ${text.slice(0, 300)}`);
    return resultOf(method, answerInBody(res.headers.get('content-type') ?? '', text, id));
  }

  async notify(method: string, signal?: AbortSignal): Promise<void> {
    await (await this.post({ jsonrpc: '2.0', method }, signal)).text();
  }

  async close(): Promise<void> {}
}
