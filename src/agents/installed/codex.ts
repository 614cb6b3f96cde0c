// Codex CLI (npm @openai/codex): the npm package's platform build (@openai/codex@<v>-linux-x64) carries a
// static musl binary, which is all the layer holds. It runs `codex exec --json` against a model provider
// pointing at the gateway (Responses API, streamed), and its JSON events become ATIF.
import { shellQuote } from '../../sandbox/index.ts';
import { jsonLines, obj, str, transcriptOf, type AnswerStep } from './transcript-parts.ts';
import { agentDir, agentLog, type AgentRun, type InstalledAgent } from './types.ts';

const VERSION = '0.169.0';
const BIN = `${agentDir('codex')}/bin/codex`;
const KEY_VAR = 'BERTH_GATEWAY_TOKEN';
const codexHome = (run: AgentRun): string => `${run.home}/.codex`;

/**
 * config.toml's `[mcp_servers.<name>]` tables: a command and its args (stdio) or a url (streamable HTTP). Codex has no
 * client for the older HTTP+SSE transport, so an `sse` server is left out (docs/departures.md). JSON strings are valid
 * TOML basic strings.
 */
export function codexMcpConfig(run: AgentRun): string {
  return run.mcpServers.filter((s) => s.transport !== 'sse').map((s) => {
    const body = s.transport === 'stdio'
      ? [`command = ${JSON.stringify(s.command)}`, `args = [${s.args.map((a) => JSON.stringify(a)).join(', ')}]`]
      : [`url = ${JSON.stringify(s.url)}`];
    return [`[mcp_servers.${JSON.stringify(s.name)}]`, ...body].join('\n');
  }).join('\n\n');
}

export const codex: InstalledAgent = {
  name: 'codex',
  version: VERSION,
  providers: ['openai'],
  protocol: () => 'openai-responses',
  install: { kind: 'npm-binary', package: '@openai/codex', version: `${VERSION}-linux-x64`, file: 'vendor/x86_64-unknown-linux-musl/bin/codex' },
  options: [
    { name: 'reasoning_effort', default: null, description: 'model_reasoning_effort in its config (-c)', choices: ['minimal', 'low', 'medium', 'high', 'xhigh'] },
  ],
  versionCommand: `${BIN} --version`,
  output: agentLog('codex.jsonl'),
  env: (run) => ({ [KEY_VAR]: run.token, CODEX_HOME: codexHome(run), HOME: run.home }),
  configFiles: (run) => {
    const toml = codexMcpConfig(run);
    return toml ? [{ path: `${codexHome(run)}/config.toml`, content: `${toml}\n` }] : [];
  },
  // Codex reads skills from $CODEX_HOME/skills/<name>/SKILL.md.
  skillsHome: (run) => `${codexHome(run)}/skills`,
  command: (run) => {
    const provider = `model_providers.berth={name="berth",base_url="${run.gatewayUrl}/v1",env_key="${KEY_VAR}",wire_api="responses"}`;
    return `mkdir -p "$CODEX_HOME" && ${BIN} exec --json --skip-git-repo-check --dangerously-bypass-approvals-and-sandbox ` +
      `-m ${shellQuote(run.model)} -c model_provider=berth -c ${shellQuote(provider)} ` +
      `${run.args['reasoning_effort'] ? `-c ${shellQuote(`model_reasoning_effort="${run.args['reasoning_effort']}"`)} ` : ''}- < ${shellQuote(run.instructionFile)}`;
  },
  transcript: ({ stdout, sessionId, instruction, model }) => {
    const answers: AnswerStep[] = [];
    const notes: string[] = [];
    for (const e of jsonLines(stdout)) {
      if (e['type'] !== 'item.completed') continue;
      const item = obj(e['item']);
      const type = item['type'];
      if (type === 'agent_message') answers.push({ text: str(item['text']), toolCalls: [] });
      else if (type === 'reasoning') answers.push({ text: '', reasoning: str(item['text']), toolCalls: [] });
      else if (type === 'command_execution') {
        answers.push({ text: '', toolCalls: [{ id: str(item['id']), name: 'exec_command', arguments: { command: str(item['command']) }, output: str(item['aggregated_output']), extra: { exit_code: item['exit_code'] ?? null } }] });
      } else if (type === 'file_change' || type === 'mcp_tool_call' || type === 'web_search') {
        answers.push({ text: '', toolCalls: [{ id: str(item['id']), name: String(type), arguments: obj(item) }] });
      } else if (type === 'error') notes.push(str(item['message']));
    }
    return transcriptOf({ sessionId, agent: 'codex', version: VERSION, model, instruction, answers, ...(notes.length ? { notes: notes.join('\n') } : {}) });
  },
};
