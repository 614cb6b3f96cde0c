// Shell that writes an agent's own configuration before it starts (run as the agent user, in its home under
// /logs/agent): a settings file, the task's MCP servers in the shape most agents read, and the task's skills.
import { shellQuote } from '../../sandbox/index.ts';
import { AgentConfigError } from '../errors.ts';
import type { AgentRun } from './types.ts';

/** `content` into `path` (its folder made), as the agent user. */
export function writeFileCommand(path: string, content: string): string {
  const dir = path.slice(0, path.lastIndexOf('/')) || '/';
  return `mkdir -p ${shellQuote(dir)} && printf '%s' ${shellQuote(content)} > ${shellQuote(path)}`;
}

/**
 * The `mcpServers` object of gemini-cli's settings.json (and qwen-code's, its fork): `command`/`args` for stdio,
 * `url` for the 2024-11-05 HTTP+SSE transport, `httpUrl` for streamable HTTP.
 */
export function geminiMcpServers(run: AgentRun): Record<string, Record<string, unknown>> {
  const out: Record<string, Record<string, unknown>> = {};
  for (const s of run.mcpServers) {
    if (s.transport === 'stdio') out[s.name] = { command: s.command, args: [...s.args] };
    else if (s.transport === 'sse') out[s.name] = { url: s.url };
    else out[s.name] = { httpUrl: s.url };
  }
  return out;
}

/** The task's skills folder's entries copied into `dest` (nothing when the task has none). */
export function copySkillsCommand(run: AgentRun, dest: string): string | null {
  if (!run.skillsDir) return null;
  const from = shellQuote(run.skillsDir);
  return `if [ -d ${from} ]; then mkdir -p ${shellQuote(dest)} && cp -r ${from}/. ${shellQuote(dest)}/; fi`;
}

/** Steps joined so a failing one stops the turn before the agent starts. */
export const steps = (...parts: Array<string | null>): string => parts.filter((p): p is string => p !== null).join(' && ');

/** `a` with `b` merged in, objects recursively (for an agent's --agent-arg config overlay). */
export function deepMerge(a: Record<string, unknown>, b: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...a };
  for (const [k, v] of Object.entries(b)) {
    const cur = out[k];
    const isObj = (x: unknown): x is Record<string, unknown> => typeof x === 'object' && x !== null && !Array.isArray(x);
    out[k] = isObj(cur) && isObj(v) ? deepMerge(cur, v) : v;
  }
  return out;
}

/** An --agent-arg that holds JSON (a config overlay): parsed, or a clear error. */
export function jsonArg(agent: string, name: string, value: string | undefined): Record<string, unknown> {
  if (value === undefined || value === '') return {};
  try {
    const v = JSON.parse(value) as unknown;
    if (typeof v === 'object' && v !== null && !Array.isArray(v)) return v as Record<string, unknown>;
  } catch {
    // reported below
  }
  throw new AgentConfigError(`--agent-arg ${name}: ${agent} wants a JSON object (e.g. ${name}='{"key": "value"}'), got ${value.slice(0, 80)}`);
}

/** A Python agent calling through litellm: its packages on PYTHONPATH, the gateway and token where litellm looks. */
export function litellmEnv(run: AgentRun, libDir: string): Record<string, string> {
  return {
    PYTHONPATH: libDir,
    HOME: run.home,
    ...(run.provider === 'anthropic'
      ? { ANTHROPIC_API_KEY: run.token, ANTHROPIC_API_BASE: run.gatewayUrl, ANTHROPIC_BASE_URL: run.gatewayUrl }
      : { OPENAI_API_KEY: run.token, OPENAI_API_BASE: `${run.gatewayUrl}/v1`, OPENAI_BASE_URL: `${run.gatewayUrl}/v1` }),
    // litellm's price map from the package, not the network.
    LITELLM_LOCAL_MODEL_COST_MAP: 'True',
  };
}
