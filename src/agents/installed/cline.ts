// Cline CLI (npm cline): the npm package's platform build (@cline/cli-linux-x64) is one native binary, which is all
// the layer holds. Before the turn its providers.json points its openai-compatible (or anthropic) provider at the
// gateway, the token spliced in from the environment; the turn runs `cline --json` with auto-approve, and its JSON
// events (agent_event content_start/content_end per text and tool call) become ATIF.
import { shellQuote } from '../../sandbox/index.ts';
import { steps, writeFileCommand } from './agent-files.ts';
import { jsonLines, obj, str, transcriptOf, type AnswerStep } from './transcript-parts.ts';
import { agentDir, agentLog, type AgentRun, type InstalledAgent } from './types.ts';

const VERSION = '3.0.65';
const BIN = `${agentDir('cline')}/bin/cline`;
const KEY_VAR = 'BERTH_GATEWAY_TOKEN';
const THINKING = ['none', 'low', 'medium', 'high', 'xhigh'] as const;

/** Its data folder's cline_mcp_settings.json, in the shape `cline mcp add --yes` writes. */
export function clineMcpSettings(run: AgentRun): Record<string, unknown> {
  const servers: Record<string, unknown> = {};
  for (const s of run.mcpServers) {
    servers[s.name] = {
      transport: s.transport === 'stdio' ? { type: 'stdio', command: s.command, args: [...s.args] }
        : { type: s.transport === 'sse' ? 'sse' : 'streamableHttp', url: s.url },
    };
  }
  return { mcpServers: servers };
}

/** Its provider id for the run's provider. */
const providerOf = (run: AgentRun): string => (run.provider === 'anthropic' ? 'anthropic' : 'openai-compatible');

/**
 * Its data folder's settings/providers.json, in the shape `cline auth -p … -k … -m … -b …` writes. Berth writes it
 * itself because `cline auth` takes a base URL only for OpenAI and OpenAI-compatible providers, while the anthropic
 * provider reads one from this file all the same (and calls `<baseUrl>/messages`). Cline reads an entry only with
 * its `updatedAt`.
 */
export function clineProviders(run: AgentRun, apiKey: string): Record<string, unknown> {
  const id = providerOf(run);
  return {
    version: 1, lastUsedProvider: id, modes: {},
    providers: { [id]: { settings: { provider: id, apiKey, model: run.model, baseUrl: `${run.gatewayUrl}/v1` }, updatedAt: '2026-01-01T00:00:00.000Z', tokenSource: 'manual' } },
  };
}

/** Shell writing providers.json with the token from the environment (not in the command line). */
function providersCommand(run: AgentRun): string {
  const mark = '@@BERTH_TOKEN@@';
  const [before, after] = JSON.stringify(clineProviders(run, mark)).split(mark) as [string, string];
  const dir = `${run.home}/.cline/data/settings`;
  return `mkdir -p ${shellQuote(dir)} && printf '%s%s%s' ${shellQuote(before)} "$${KEY_VAR}" ${shellQuote(after)} > ${shellQuote(`${dir}/providers.json`)}`;
}

export const cline: InstalledAgent = {
  name: 'cline',
  version: VERSION,
  providers: ['openai', 'anthropic'],
  protocol: (provider) => (provider === 'anthropic' ? 'anthropic-messages' : 'openai-chat'),
  install: { kind: 'npm-binary', package: '@cline/cli-linux-x64', version: VERSION, file: 'bin/cline', glibc: true },
  options: [
    { name: 'thinking', default: null, description: 'reasoning effort (cline --thinking)', choices: THINKING },
    { name: 'retries', default: null, description: 'most consecutive mistakes before it stops (cline --retries; its default 6)' },
    { name: 'compaction', default: null, description: 'context compaction (cline --compaction; its default agentic)', choices: ['agentic', 'basic', 'off'] },
  ],
  versionCommand: `HOME=/tmp ${BIN} --version`,
  output: agentLog('cline.jsonl'),
  env: (run) => ({ [KEY_VAR]: run.token, HOME: run.home }),
  command: (run) => {
    const a = run.args;
    const flags = [
      a['thinking'] ? `--thinking ${shellQuote(a['thinking'])}` : '',
      a['retries'] ? `--retries ${shellQuote(a['retries'])}` : '',
      a['compaction'] ? `--compaction ${shellQuote(a['compaction'])}` : '',
    ].filter(Boolean).join(' ');
    return steps(
      run.mcpServers.length ? writeFileCommand(`${run.home}/.cline/data/settings/cline_mcp_settings.json`, JSON.stringify(clineMcpSettings(run))) : null,
      providersCommand(run),
      `${BIN} --json --auto-approve true -P ${providerOf(run)} -m ${shellQuote(run.model)} ${flags ? `${flags} ` : ''}"$(cat ${shellQuote(run.instructionFile)})" < /dev/null`,
    );
  },
  transcript: ({ stdout, sessionId, instruction, model }) => {
    const answers: AnswerStep[] = [];
    const calls = new Map<string, AnswerStep['toolCalls'][number]>();
    const notes: string[] = [];
    let step: AnswerStep | null = null;
    let result = '';
    for (const line of jsonLines(stdout)) {
      const e = obj(line['event']);
      if (line['type'] === 'run_result') result = str(line['text']);
      if (line['type'] !== 'agent_event') continue;
      if (e['type'] === 'iteration_start') {
        step = { text: '', toolCalls: [], ...(typeof line['ts'] === 'string' ? { timestamp: line['ts'] } : {}) };
        answers.push(step);
      } else if (e['type'] === 'error') notes.push(str(e['message'] ?? e['error']));
      else if (step && e['type'] === 'content_end' && e['contentType'] === 'text') step.text += str(e['text']);
      else if (step && e['type'] === 'content_end' && e['contentType'] === 'reasoning') step.reasoning = (step.reasoning ?? '') + str(e['text']);
      else if (step && e['type'] === 'content_start' && e['contentType'] === 'tool') {
        const call = { id: str(e['toolCallId']), name: str(e['toolName']), arguments: obj(e['input']) };
        step.toolCalls.push(call);
        calls.set(call.id, call);
      } else if (e['type'] === 'content_end' && e['contentType'] === 'tool') {
        const call = calls.get(str(e['toolCallId']));
        if (call) call.output = str(e['output']);
      }
    }
    const t = transcriptOf({ sessionId, agent: 'cline', version: VERSION, model, instruction, answers, ...(notes.length ? { notes: notes.join('\n') } : {}) });
    return { ...t, responseText: result || t.responseText };
  },
};
