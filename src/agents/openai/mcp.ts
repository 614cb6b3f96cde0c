// The task's MCP servers as tools of the openai agent (Task Folder Format § [environment], mcp_servers):
// small clients of MCP's three transports (mcp-http.ts, mcp-sse.ts, mcp-stdio.ts) over one JSON-RPC layer
// (mcp-rpc.ts). Each server's tools are offered to the model beside bash as `<server>__<tool>`; a call is made
// by the worker (an http server reached from it, or from inside main when the URL names main or its localhost:
// mcp-relay.ts; a stdio server run in the agent's sandbox) and its result joins
// the conversation like a bash result. Every call opens its own session (for a stdio server, its own process):
// nothing outlives an activity, so a worker restarted mid-turn loses nothing.
import { appendRecord, readConversation, toolResultFor } from './conversation.ts';
import { initializeSession, type McpConnection, type StdioStarter } from './mcp-rpc.ts';
import { StreamableHttpConnection, STREAMABLE_HTTP_VERSION } from './mcp-http.ts';
import { SseConnection, SSE_VERSION } from './mcp-sse.ts';
import { StdioConnection, STDIO_VERSION } from './mcp-stdio.ts';
import { dialFromWorker, dialThroughMain, reachedInMain } from './mcp-relay.ts';
import { SandboxLost } from '../../sandbox/index.ts';
import type { ToolCall } from './types.ts';

const RESULT_CAP = 16 * 1024;

/** Where one server is reached: a URL from the worker, or a command run in the agent's sandbox. Plain data. */
export type McpEndpoint =
  | { transport: 'streamable-http' | 'sse'; url: string }
  | { transport: 'stdio'; command: string; args: string[] };

/** One MCP tool as the model sees it (a function tool) and as the agent calls it. Plain data. */
export interface McpToolBinding {
  /** The function name offered to the model. */
  name: string;
  server: string;
  /** Absent in bindings written before sse and stdio: streamable-http. */
  transport?: McpEndpoint['transport'];
  /** The URL the worker reaches an http server at (one on main's localhost or named main: from inside main). */
  url?: string;
  /** A stdio server's command and arguments. */
  command?: string;
  args?: string[];
  tool: string;
  description: string;
  parameters: Record<string, unknown>;
}

export type { StdioStarter };

export function endpointOf(b: McpToolBinding): McpEndpoint {
  if (b.transport === 'stdio') return { transport: 'stdio', command: b.command ?? '', args: b.args ?? [] };
  return { transport: b.transport ?? 'streamable-http', url: b.url ?? '' };
}

/** Where a server is, as a note names it. */
export function describeEndpoint(e: McpEndpoint): string {
  return e.transport === 'stdio' ? [e.command, ...e.args].join(' ') : e.url;
}

const dialFor = (url: string, startInMain: StdioStarter) => (reachedInMain(url) ? dialThroughMain(startInMain) : dialFromWorker);

/** A connection with its session opened, on the endpoint's transport. */
export async function connectMcp(endpoint: McpEndpoint, startStdio: StdioStarter, signal?: AbortSignal): Promise<McpConnection> {
  let conn: McpConnection;
  let version: string;
  if (endpoint.transport === 'stdio') {
    conn = new StdioConnection(await startStdio([endpoint.command, ...endpoint.args], signal), `the stdio server ${describeEndpoint(endpoint)}`);
    version = STDIO_VERSION;
  } else if (endpoint.transport === 'sse') {
    conn = await SseConnection.open(endpoint.url, signal, dialFor(endpoint.url, startStdio));
    version = SSE_VERSION;
  } else {
    conn = new StreamableHttpConnection(endpoint.url, dialFor(endpoint.url, startStdio));
    version = STREAMABLE_HTTP_VERSION;
  }
  try {
    await initializeSession(conn, version, signal);
    return conn;
  } catch (err) {
    await conn.close();
    throw err;
  }
}

/** A function name the Chat Completions API accepts: [A-Za-z0-9_-], at most 64 characters. */
export function mcpFunctionName(server: string, tool: string): string {
  return `${server}__${tool}`.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 64);
}

/** Every tool of one server, bound for the model. */
export async function listMcpTools(server: string, endpoint: McpEndpoint, startStdio: StdioStarter, signal?: AbortSignal): Promise<McpToolBinding[]> {
  const session = await connectMcp(endpoint, startStdio, signal);
  const out: McpToolBinding[] = [];
  try {
    let cursor: string | undefined;
    do {
      const page = await session.request('tools/list', cursor ? { cursor } : {}, signal);
      for (const t of (page.tools as { name: string; description?: string; inputSchema?: Record<string, unknown> }[] | undefined) ?? []) {
        out.push({
          name: mcpFunctionName(server, t.name), server, ...endpoint, tool: t.name,
          description: t.description ?? `${t.name} from MCP server ${server}`, parameters: t.inputSchema ?? { type: 'object', properties: {} },
        });
      }
      cursor = typeof page.nextCursor === 'string' ? page.nextCursor : undefined;
    } while (cursor);
  } finally {
    await session.close();
  }
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

export interface McpCallOptions {
  startStdio: StdioStarter;
  /** The tool's budget: how long its answer may take. */
  timeoutSec: number;
  signal?: AbortSignal;
}

/** Runs one MCP tool call and appends its result to the conversation; idempotent by tool call id. */
export async function runMcpTool(binding: McpToolBinding, call: ToolCall, conversationPath: string, o: McpCallOptions): Promise<{ content: string; reused: boolean }> {
  const existing = toolResultFor(await readConversation(conversationPath), call.id);
  if (existing && existing.message.role === 'tool') return { content: existing.message.content, reused: true };
  let content: string;
  if (call.argumentsError) {
    content = `error: ${call.argumentsError}; call ${binding.name} with a JSON object of its parameters`;
  } else {
    const endpoint = endpointOf(binding);
    try {
      const session = await connectMcp(endpoint, o.startStdio, o.signal);
      try {
        content = resultText(await session.request('tools/call', { name: binding.tool, arguments: call.arguments }, o.signal, o.timeoutSec * 1000));
      } finally {
        await session.close();
      }
    } catch (err) {
      if (err instanceof SandboxLost) throw err; // the sandbox is gone: the episode is masked, not told of a tool error
      content = `error: MCP server ${binding.server} (${describeEndpoint(endpoint)}) could not run ${binding.tool}: ${(err as Error).message}`;
    }
  }
  await appendRecord(conversationPath, { message: { role: 'tool', tool_call_id: call.id, content } });
  return { content, reused: false };
}
