// The openai agent's MCP tools for one turn: each MCP server of the task. An http server (streamable-http or
// sse) is reached from the worker (a server named by its Compose service goes to that container's address on the
// group's network), except one on main's localhost or named main, which is reached from inside main as main's own
// processes reach it (agents/openai/mcp-relay.ts); a stdio server's command runs in the agent's sandbox as the agent
// user, once per session.
import { describeEndpoint, listMcpTools, reachedInMain, type McpEndpoint, type McpToolBinding, type StdioStarter } from '../agents/index.ts';
import type { McpServer, Task } from '../task/index.ts';
import type { SandboxRef } from '../activities/types.ts';
import { SandboxLost, type SandboxProvider } from '../sandbox/index.ts';
import { handleOf, serviceHandle } from './handle.ts';

/** The URL the worker uses: the service's container address in place of its service name; main's own, as is. */
async function reachable(provider: SandboxProvider, url: string, sandbox: SandboxRef): Promise<string> {
  if (reachedInMain(url)) return url;
  const u = new URL(url);
  const service = sandbox.group?.services[u.hostname];
  if (!service) return url;
  const ip = await provider.network.address(serviceHandle(service).containerId);
  if (!ip) throw new Error(`service ${u.hostname} has no network address`);
  u.hostname = ip;
  return u.toString();
}

const declaredEndpoint = (s: McpServer): McpEndpoint => (s.transport === 'stdio'
  ? { transport: 'stdio', command: s.command ?? '', args: [...s.args] }
  : { transport: s.transport, url: s.url ?? '' });

/**
 * A stdio server's process, in main as `user`, bounded by `timeoutSec` inside the sandbox. A process per session
 * (one to list the tools, one per call) rather than one kept for the turn: a tool call is its own activity, so a
 * kept process would have to outlive it and be found again by a worker that may have restarted; a server that
 * keeps state across calls in memory loses it (one that keeps it in the sandbox's files does not).
 */
export function stdioStarter(provider: SandboxProvider, sandbox: SandboxRef, user: string, timeoutSec: number): StdioStarter {
  return (argv) => provider.execWithStdin(handleOf(sandbox), { argv, user, timeoutSec });
}

/** Bindings for every server that answered; `notes` says which did not, and why (written with the turn's logs). */
export async function mcpToolsFor(provider: SandboxProvider, task: Task, sandbox: SandboxRef, startStdio: StdioStarter, signal?: AbortSignal): Promise<{ tools: McpToolBinding[]; notes: string[] }> {
  const tools: McpToolBinding[] = [];
  const notes: string[] = [];
  for (const s of task.environment.mcp_servers) {
    const declared = declaredEndpoint(s);
    try {
      const endpoint = declared.transport === 'stdio' ? declared : { ...declared, url: await reachable(provider, declared.url, sandbox) };
      tools.push(...await listMcpTools(s.name, endpoint, startStdio, signal));
    } catch (err) {
      if (err instanceof SandboxLost) throw err;
      notes.push(`MCP server ${s.name} (${s.transport}) at ${describeEndpoint(declared)} did not list its tools: ${(err as Error).message}`);
    }
  }
  return { tools, notes };
}
