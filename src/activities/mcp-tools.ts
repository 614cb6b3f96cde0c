// The openai agent's MCP tools for one turn: each streamable-http server of the task, reached from the worker
// (a server named by its Compose service goes to that container's address on the group's network).
import { listMcpTools, type McpToolBinding } from '../agents/index.ts';
import type { Task } from '../task/index.ts';
import type { SandboxRef } from './types.ts';
import type { SandboxProvider } from '../sandbox/index.ts';
import { serviceHandle } from './handle.ts';

/** The URL the worker uses: the service's container address in place of its service name. */
async function reachable(provider: SandboxProvider, url: string, sandbox: SandboxRef): Promise<string> {
  const u = new URL(url);
  const service = sandbox.group?.services[u.hostname];
  if (!service) return url;
  const ip = await provider.addressOf(serviceHandle(service).containerId);
  if (!ip) throw new Error(`service ${u.hostname} has no network address`);
  u.hostname = ip;
  return u.toString();
}

/** Bindings for every server that answered; `notes` says which did not, and why (written with the turn's logs). */
export async function mcpToolsFor(provider: SandboxProvider, task: Task, sandbox: SandboxRef, signal?: AbortSignal): Promise<{ tools: McpToolBinding[]; notes: string[] }> {
  const tools: McpToolBinding[] = [];
  const notes: string[] = [];
  for (const s of task.environment.mcp_servers) {
    if (s.transport !== 'streamable-http' || !s.url) {
      notes.push(`MCP server ${s.name} (${s.transport}) is not connected: the openai agent speaks streamable-http; it is listed in the task file`);
      continue;
    }
    try {
      tools.push(...await listMcpTools(s.name, await reachable(provider, s.url, sandbox), signal));
    } catch (err) {
      notes.push(`MCP server ${s.name} at ${s.url} did not list its tools: ${(err as Error).message}`);
    }
  }
  return { tools, notes };
}
