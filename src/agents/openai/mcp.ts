// The task's MCP servers as tools of the openai agent (task-folder-format.md § [environment], mcp_servers):
// a small client of MCP's streamable-http transport (JSON-RPC 2.0 over POST, answered as JSON or as an SSE
// stream; the server's Mcp-Session-Id echoed back). Each server's tools are offered to the model beside bash
// as `<server>__<tool>`; a call runs on the worker and its result joins the conversation like a bash result.
import { appendRecord, readConversation, toolResultFor } from './conversation.ts';
import type { ToolCall } from './types.ts';

const PROTOCOL_VERSION = '2025-03-26';
const REQUEST_TIMEOUT_MS = 60_000;
const RESULT_CAP = 16 * 1024;

/** One MCP tool as the model sees it (a function tool) and as the agent calls it. Plain data. */
export interface McpToolBinding {
  /** The function name offered to the model. */
  name: string;
  server: string;
  /** The URL the worker reaches the server at. */
  url: string;
  tool: string;
  description: string;
  parameters: Record<string, unknown>;
}

interface RpcResponse {
  result?: Record<string, unknown>;
  error?: { code?: number; message?: string };
}

class McpError extends Error {
  override readonly name = 'McpError';
}

function parseBody(contentType: string, text: string, id: number): RpcResponse {
  if (contentType.includes('text/event-stream')) {
    for (const event of text.split(/\r?\n\r?\n/)) {
      const data = event.split(/\r?\n/).filter((l) => l.startsWith('data:')).map((l) => l.slice(5).trimStart()).join('\n');
      if (!data) continue;
      const msg = JSON.parse(data) as RpcResponse & { id?: number };
      if (msg.id === id) return msg;
    }
    throw new McpError('the server\'s event stream ended without the answer');
  }
  return JSON.parse(text) as RpcResponse;
}

/** One session with one server: initialize, then requests carrying its session id. */
export class McpSession {
  private sessionId: string | undefined;
  private nextId = 1;

  constructor(readonly url: string) {}

  private async post(body: Record<string, unknown>, signal?: AbortSignal): Promise<Response> {
    const headers: Record<string, string> = {
      'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': PROTOCOL_VERSION,
    };
    if (this.sessionId) headers['mcp-session-id'] = this.sessionId;
    const timeout = AbortSignal.timeout(REQUEST_TIMEOUT_MS);
    const res = await fetch(this.url, { method: 'POST', headers, body: JSON.stringify(body), signal: signal ? AbortSignal.any([signal, timeout]) : timeout });
    this.sessionId = res.headers.get('mcp-session-id') ?? this.sessionId;
    return res;
  }

  async request(method: string, params: Record<string, unknown>, signal?: AbortSignal): Promise<Record<string, unknown>> {
    const id = this.nextId++;
    const res = await this.post({ jsonrpc: '2.0', id, method, params }, signal);
    const text = await res.text();
    if (!res.ok) throw new McpError(`${method} answered HTTP ${res.status}: ${text.slice(0, 300)}`);
    const msg = parseBody(res.headers.get('content-type') ?? '', text, id);
    if (msg.error) throw new McpError(`${method} failed: ${msg.error.message ?? JSON.stringify(msg.error)}`);
    return msg.result ?? {};
  }

  async initialize(signal?: AbortSignal): Promise<void> {
    await this.request('initialize', { protocolVersion: PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'berth', version: '0.1.0' } }, signal);
    const res = await this.post({ jsonrpc: '2.0', method: 'notifications/initialized' }, signal);
    await res.text();
  }
}

/** A function name the Chat Completions API accepts: [A-Za-z0-9_-], at most 64 characters. */
export function mcpFunctionName(server: string, tool: string): string {
  return `${server}__${tool}`.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 64);
}

/** Every tool of one streamable-http server, bound for the model. */
export async function listMcpTools(server: string, url: string, signal?: AbortSignal): Promise<McpToolBinding[]> {
  const session = new McpSession(url);
  await session.initialize(signal);
  const out: McpToolBinding[] = [];
  let cursor: string | undefined;
  do {
    const page = await session.request('tools/list', cursor ? { cursor } : {}, signal);
    for (const t of (page.tools as { name: string; description?: string; inputSchema?: Record<string, unknown> }[] | undefined) ?? []) {
      out.push({ name: mcpFunctionName(server, t.name), server, url, tool: t.name, description: t.description ?? `${t.name} from MCP server ${server}`, parameters: t.inputSchema ?? { type: 'object', properties: {} } });
    }
    cursor = typeof page.nextCursor === 'string' ? page.nextCursor : undefined;
  } while (cursor);
  return out;
}

/** The function tools sent to the model beside bash. */
export function mcpFunctionTools(bindings: readonly McpToolBinding[]): Record<string, unknown>[] {
  return bindings.map((b) => ({ type: 'function', function: { name: b.name, description: `[MCP ${b.server}] ${b.description}`, parameters: b.parameters } }));
}

function resultText(result: Record<string, unknown>): string {
  const parts = ((result.content as { type?: string; text?: string }[] | undefined) ?? []).map((c) => (c.type === 'text' ? c.text ?? '' : JSON.stringify(c)));
  const text = parts.join('\n') || JSON.stringify(result.structuredContent ?? result);
  const body = text.length > RESULT_CAP ? `…${text.slice(-RESULT_CAP)}` : text;
  return result.isError ? `the tool reported an error:\n${body}` : body;
}

/** Runs one MCP tool call and appends its result to the conversation; idempotent by tool call id. */
export async function runMcpTool(binding: McpToolBinding, call: ToolCall, conversationPath: string, signal?: AbortSignal): Promise<{ content: string; reused: boolean }> {
  const existing = toolResultFor(await readConversation(conversationPath), call.id);
  if (existing && existing.message.role === 'tool') return { content: existing.message.content, reused: true };
  let content: string;
  if (call.argumentsError) {
    content = `error: ${call.argumentsError}; call ${binding.name} with a JSON object of its parameters`;
  } else {
    try {
      const session = new McpSession(binding.url);
      await session.initialize(signal);
      content = resultText(await session.request('tools/call', { name: binding.tool, arguments: call.arguments }, signal));
    } catch (err) {
      content = `error: MCP server ${binding.server} (${binding.url}) could not run ${binding.tool}: ${(err as Error).message}`;
    }
  }
  await appendRecord(conversationPath, { message: { role: 'tool', tool_call_id: call.id, content } });
  return { content, reused: false };
}
