// MCP's JSON-RPC 2.0 layer, shared by every transport (streamable-http, sse, stdio): the connection each one
// offers, the session opening (initialize, then notifications/initialized), answers matched to requests by id,
// and what the client says to the server's own requests (a ping is answered, anything else is refused).
import type { StdinProcess } from '../../sandbox/index.ts';

/** Starts a process in the agent's sandbox: a stdio server, or an http relay (the activity knows which sandbox, and as whom). */
export type StdioStarter = (argv: string[], signal?: AbortSignal) => Promise<StdinProcess>;

export const REQUEST_TIMEOUT_MS = 60_000;
const CLIENT_INFO = { name: 'berth', version: '0.1.0' };

export interface RpcMessage {
  jsonrpc?: string;
  id?: number | string | null;
  method?: string;
  params?: Record<string, unknown>;
  result?: Record<string, unknown>;
  error?: { code?: number; message?: string; data?: unknown };
}

export class McpError extends Error {
  override readonly name = 'McpError';
}

/** One open connection to one MCP server, whatever carries it. */
export interface McpConnection {
  /** `timeoutMs`: how long the answer may take (default REQUEST_TIMEOUT_MS; a tool call gets the tool's budget). */
  request(method: string, params: Record<string, unknown>, signal?: AbortSignal, timeoutMs?: number): Promise<Record<string, unknown>>;
  notify(method: string, signal?: AbortSignal): Promise<void>;
  close(): Promise<void>;
}

/** The server's answer to `method`, or its error as an McpError. */
export function resultOf(method: string, msg: RpcMessage): Record<string, unknown> {
  if (msg.error) throw new McpError(`${method} failed: ${msg.error.message ?? JSON.stringify(msg.error)}`);
  return msg.result ?? {};
}

/** Opens the session: initialize with the transport's protocol revision, then the initialized notification. */
export async function initializeSession(conn: McpConnection, protocolVersion: string, signal?: AbortSignal): Promise<void> {
  await conn.request('initialize', { protocolVersion, capabilities: {}, clientInfo: CLIENT_INFO }, signal);
  await conn.notify('notifications/initialized', signal);
}

/** A request's own deadline, joined with the caller's cancellation. */
export function requestSignal(signal?: AbortSignal, timeoutMs = REQUEST_TIMEOUT_MS): AbortSignal {
  const timeout = AbortSignal.timeout(timeoutMs);
  return signal ? AbortSignal.any([signal, timeout]) : timeout;
}

/** The answer to a request the server sent the client: Berth offers no client capabilities beyond ping. */
function answerToServer(msg: RpcMessage): RpcMessage {
  return msg.method === 'ping'
    ? { jsonrpc: '2.0', id: msg.id, result: {} }
    : { jsonrpc: '2.0', id: msg.id, error: { code: -32601, message: `the client does not offer ${msg.method}` } };
}

interface Waiter {
  method: string;
  resolve(result: Record<string, unknown>): void;
  reject(err: Error): void;
}

/**
 * Requests in flight on a transport whose answers arrive apart from the request (the sse stream, a stdio
 * process's stdout): each waits for the message with its id, for its deadline, or for the stream's end.
 */
export class PendingRequests {
  private nextId = 1;
  private readonly waiting = new Map<number | string, Waiter>();
  private ended: Error | undefined;

  /**
   * Sends one request with `send` and waits for its answer. `send` failing fails the request.
   */
  async call(method: string, params: Record<string, unknown>, send: (msg: RpcMessage) => Promise<void>, signal?: AbortSignal, timeoutMs?: number): Promise<Record<string, unknown>> {
    if (this.ended) throw this.ended;
    const id = this.nextId++;
    const deadline = requestSignal(signal, timeoutMs);
    const answer = new Promise<Record<string, unknown>>((resolve, reject) => {
      this.waiting.set(id, { method, resolve, reject });
    });
    answer.catch(() => undefined); // settled while `send` is still running: handled below, not unhandled
    const onAbort = () => this.settle(id, undefined, new McpError(`${method} got no answer: ${String(deadline.reason?.message ?? deadline.reason)}`));
    deadline.addEventListener('abort', onAbort, { once: true });
    try {
      await send({ jsonrpc: '2.0', id, method, params });
      return await answer;
    } catch (err) {
      this.waiting.delete(id);
      throw err;
    } finally {
      deadline.removeEventListener('abort', onAbort);
    }
  }

  /** One message from the server: an answer settles its request; a request of the server's is answered by `reply`. */
  receive(msg: RpcMessage, reply: (msg: RpcMessage) => void): void {
    if (msg.method !== undefined) {
      if (msg.id !== undefined && msg.id !== null) reply(answerToServer(msg));
      return;
    }
    if (msg.id === undefined || msg.id === null) return;
    const waiter = this.waiting.get(msg.id);
    if (!waiter) return;
    try {
      this.settle(msg.id, resultOf(waiter.method, msg));
    } catch (err) {
      this.settle(msg.id, undefined, err as Error);
    }
  }

  /** The stream ended: every request still waiting, and every later one, fails with `err`. */
  end(err: Error): void {
    this.ended ??= err;
    for (const id of [...this.waiting.keys()]) this.settle(id, undefined, this.ended);
  }

  private settle(id: number | string, result: Record<string, unknown> | undefined, err?: Error): void {
    const waiter = this.waiting.get(id);
    if (!waiter) return;
    this.waiting.delete(id);
    if (err) waiter.reject(err);
    else waiter.resolve(result ?? {});
  }
}
