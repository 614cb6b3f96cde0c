// OpenHands (PyPI `openhands`, the V1 CLI on the OpenHands Software Agent SDK). It needs Python 3.12 or 3.13, newer
// than most task images have, so its layer brings the CPython Berth builds (bundled-python.ts) and installs the
// CLI's wheels for it. A turn runs `openhands --headless --json` (always-approve, no UI) in the working directory
// with its tools acting on the sandbox itself (no runtime container of its own); its model calls go through
// litellm at the gateway, and the events it streams on stdout become ATIF.
import { shellQuote } from '../../sandbox/index.ts';
import { AgentConfigError } from '../errors.ts';
import { litellmEnv } from './agent-files.ts';
import { BUNDLED_PYTHONS } from './bundled-python.ts';
import { arr, jsonLines, obj, str, transcriptOf, type AnswerStep, type Json } from './transcript-parts.ts';
import { agentDir, agentLog, type AgentOption, type AgentRun, type ConfigFile, type InstalledAgent } from './types.ts';

const VERSION = '1.16.0';
const DIR = agentDir('openhands');
const PYTHON = BUNDLED_PYTHONS['cpython-3.13'];
/** The CLI's console script, its shebang naming the bundled Python. */
const CLI = `${DIR}/lib/bin/openhands`;

const OPTIONS: readonly AgentOption[] = [
  { name: 'reasoning_effort', default: null, description: 'reasoning effort of the model (LLM reasoning_effort)', choices: ['none', 'low', 'medium', 'high'] },
  { name: 'temperature', default: null, description: 'sampling temperature (LLM temperature)' },
  { name: 'top_p', default: null, description: 'nucleus sampling (LLM top_p)' },
  { name: 'max_output_tokens', default: null, description: 'output tokens per call (LLM max_output_tokens)' },
  { name: 'disable_tool_calls', default: 'false', description: 'tools described in the prompt instead of native function calls (LLM native_tool_calling=false)', choices: ['true', 'false'] },
];

function number(name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n)) throw new AgentConfigError(`--agent-arg ${name}=${value}: openhands wants a number`);
  return n;
}

/**
 * The CLI's agent_settings.json (a serialized SDK Agent): the model at the gateway and the --agent-arg options. The
 * token is not in it: `--override-with-envs` takes LLM_API_KEY from the environment. The CLI sets the tools, MCP
 * servers and skills itself at each start.
 */
export function openhandsAgentSettings(run: AgentRun): Json {
  const a = run.args;
  const temperature = number('temperature', a['temperature']);
  const topP = number('top_p', a['top_p']);
  const maxOutput = number('max_output_tokens', a['max_output_tokens']);
  return {
    llm: {
      model: `${run.provider}/${run.model}`,
      base_url: run.provider === 'anthropic' ? run.gatewayUrl : `${run.gatewayUrl}/v1`,
      usage_id: 'agent',
      ...(a['reasoning_effort'] ? { reasoning_effort: a['reasoning_effort'] } : {}),
      ...(temperature !== undefined ? { temperature } : {}),
      ...(topP !== undefined ? { top_p: topP } : {}),
      ...(maxOutput !== undefined ? { max_output_tokens: maxOutput } : {}),
      ...(a['disable_tool_calls'] === 'true' ? { native_tool_calling: false } : {}),
    },
    tools: [],
  };
}

/** The CLI's mcp.json: stdio servers by command, remote ones by URL with their transport. */
export function openhandsMcpConfig(run: AgentRun): Json {
  const servers: Json = {};
  for (const s of run.mcpServers) {
    servers[s.name] = s.transport === 'stdio'
      ? { command: s.command, args: [...s.args], transport: 'stdio' }
      : { url: s.url, transport: s.transport === 'sse' ? 'sse' : 'http' };
  }
  return { mcpServers: servers };
}

const texts = (content: unknown): string => arr(content).map(obj).map((c) => str(c['text'])).filter(Boolean).join('\n');
/** Its terminal's output carries the PTY's control sequences (bracketed-paste mode and the like). */
const plain = (text: string): string => text.replace(/\u001b\[[0-9;?]*[A-Za-z]/g, '').trim();

function parsedArguments(call: Json, action: Json): Record<string, unknown> {
  try {
    const v = JSON.parse(str(call['arguments'])) as unknown;
    if (typeof v === 'object' && v !== null && !Array.isArray(v)) return v as Record<string, unknown>;
  } catch {
    // the action the SDK parsed, below
  }
  const { kind: _kind, ...rest } = action;
  return rest;
}

const isoTime = (t: unknown): Record<string, string> => {
  const ms = typeof t === 'string' ? Date.parse(/[zZ]|[+-]\d\d:\d\d$/.test(t) ? t : `${t}Z`) : NaN;
  return Number.isFinite(ms) ? { timestamp: new Date(ms).toISOString() } : {};
};

/**
 * The events `--json` prints, one JSON object a line, as answers: the actions of one model response (one
 * `llm_response_id`) are one step's tool calls, each with its observation's text (or the error the SDK returned
 * to the model); an agent message is a step of its own.
 */
export function openhandsAnswers(stdout: string): { answers: AnswerStep[]; errors: string[] } {
  const answers: AnswerStep[] = [];
  const errors: string[] = [];
  const byResponse = new Map<string, AnswerStep>();
  const calls = new Map<string, AnswerStep['toolCalls'][number]>();
  for (const e of jsonLines(stdout)) {
    if (typeof e['tool_name'] === 'string' && e['tool_call'] !== undefined) {
      const responseId = str(e['llm_response_id']);
      let step = byResponse.get(responseId);
      if (!step) {
        step = { text: texts(e['thought']), toolCalls: [], ...(e['reasoning_content'] ? { reasoning: str(e['reasoning_content']) } : {}), ...isoTime(e['timestamp']) };
        byResponse.set(responseId, step);
        answers.push(step);
      }
      const call = { id: str(e['tool_call_id']), name: str(e['tool_name']), arguments: parsedArguments(obj(e['tool_call']), obj(e['action'])) };
      calls.set(call.id, call);
      step.toolCalls.push(call);
    } else if (e['observation'] !== undefined || typeof e['error'] === 'string' || e['rejection_reason'] !== undefined) {
      const call = calls.get(str(e['tool_call_id']));
      const output = e['observation'] !== undefined ? plain(texts(obj(e['observation'])['content'])) : str(e['error'] ?? e['rejection_reason']);
      if (call) call.output = output;
      else if (typeof e['error'] === 'string') errors.push(e['error']);
    } else if (e['llm_message'] !== undefined && e['source'] === 'agent') {
      answers.push({ text: texts(obj(e['llm_message'])['content']), toolCalls: [], ...isoTime(e['timestamp']) });
    } else if (str(e['kind']).endsWith('ErrorEvent') || (e['code'] !== undefined && e['detail'] !== undefined)) {
      errors.push(str(e['detail'] ?? e['error'] ?? e['code']));
    }
  }
  return { answers, errors };
}

export const openhands: InstalledAgent = {
  name: 'openhands',
  version: VERSION,
  providers: ['openai', 'anthropic'],
  protocol: (provider) => (provider === 'anthropic' ? 'anthropic-messages' : 'openai-chat'),
  install: {
    kind: 'pypi', package: 'openhands', version: VERSION, minPython: [PYTHON.major, PYTHON.minor], python: 'cpython-3.13',
    // The CLI's Requires-Python is ==3.12.* (its PyInstaller build); the SDK it runs on supports 3.13.
    ignoreRequiresPython: true,
    sdists: ['func-timeout==4.3.5'],
  },
  options: OPTIONS,
  versionCommand: `PYTHONPATH=${DIR}/lib ${CLI} --version`,
  output: agentLog('openhands.jsonl'),
  env: (run) => ({
    ...litellmEnv(run, `${DIR}/lib`),
    LLM_API_KEY: run.token,
    LLM_MODEL: `${run.provider}/${run.model}`,
    LLM_BASE_URL: run.provider === 'anthropic' ? run.gatewayUrl : `${run.gatewayUrl}/v1`,
    OPENHANDS_PERSISTENCE_DIR: `${run.home}/.openhands`,
    OPENHANDS_SUPPRESS_BANNER: '1',
  }),
  configFiles: (run): ConfigFile[] => [
    { path: `${run.home}/.openhands/agent_settings.json`, content: JSON.stringify(openhandsAgentSettings(run)) },
    ...(run.mcpServers.length ? [{ path: `${run.home}/.openhands/mcp.json`, content: JSON.stringify(openhandsMcpConfig(run)) }] : []),
  ],
  skillsHome: (run) => `${run.home}/.openhands/skills`,
  // The instruction as the task text (--task), as Harbor gives it: --file would wrap it in a "file context" message.
  command: (run) => `${CLI} --headless --json --override-with-envs --task "$(cat ${shellQuote(run.instructionFile)})" < /dev/null`,
  transcript: ({ stdout, sessionId, instruction, model }) => {
    const { answers, errors } = openhandsAnswers(stdout);
    return transcriptOf({ sessionId, agent: 'openhands', version: VERSION, model, instruction, answers, ...(errors.length ? { notes: errors.slice(0, 5).join('\n') } : {}) });
  },
};
