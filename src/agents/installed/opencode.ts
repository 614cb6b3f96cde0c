// OpenCode (npm opencode-ai): the npm package's platform build (opencode-linux-x64) is one native binary, which is
// all the layer holds. It runs `opencode run --format json` with a provider named `berth` in its global config
// pointing at the gateway (Chat Completions through @ai-sdk/openai-compatible, or Anthropic Messages), and its
// JSON events (step_start, text, reasoning, tool_use, step_finish) become ATIF.
import { shellQuote } from '../../sandbox/index.ts';
import { copySkillsCommand, deepMerge, jsonArg, steps, writeFileCommand } from './agent-files.ts';
import { jsonLines, obj, str, transcriptOf, type AnswerStep } from './transcript-parts.ts';
import { agentDir, agentLog, type AgentRun, type InstalledAgent } from './types.ts';

const VERSION = '1.18.33';
const BIN = `${agentDir('opencode')}/bin/opencode`;
const KEY_VAR = 'BERTH_GATEWAY_TOKEN';

/** Its global config ($XDG_CONFIG_HOME/opencode/opencode.json): the gateway as provider `berth`, MCP servers, no sharing. */
export function opencodeConfig(run: AgentRun): Record<string, unknown> {
  const anthropic = run.provider === 'anthropic';
  const mcp: Record<string, unknown> = {};
  for (const s of run.mcpServers) {
    mcp[s.name] = s.transport === 'stdio'
      ? { type: 'local', command: [s.command, ...s.args], enabled: true }
      : { type: 'remote', url: s.url, enabled: true, oauth: false };
  }
  const config = {
    $schema: 'https://opencode.ai/config.json',
    provider: {
      berth: {
        npm: anthropic ? '@ai-sdk/anthropic' : '@ai-sdk/openai-compatible',
        name: 'berth gateway',
        options: { baseURL: `${run.gatewayUrl}/v1`, apiKey: `{env:${KEY_VAR}}` },
        models: { [run.model]: {} },
      },
    },
    model: `berth/${run.model}`,
    small_model: `berth/${run.model}`,
    autoupdate: false,
    share: 'disabled',
    ...(run.mcpServers.length ? { mcp } : {}),
  };
  return deepMerge(config, jsonArg('opencode', 'opencode_config', run.args['opencode_config']));
}

export const opencode: InstalledAgent = {
  name: 'opencode',
  version: VERSION,
  providers: ['openai', 'anthropic'],
  protocol: (provider) => (provider === 'anthropic' ? 'anthropic-messages' : 'openai-chat'),
  install: { kind: 'npm-binary', package: 'opencode-linux-x64', version: VERSION, file: 'bin/opencode', glibc: true },
  options: [
    { name: 'variant', default: null, description: 'the model variant (opencode run --variant), e.g. a reasoning effort' },
    { name: 'agent', default: null, description: 'the opencode agent to run (opencode run --agent), e.g. build or plan' },
    { name: 'opencode_config', default: null, json: true, description: 'JSON merged over the opencode.json Berth writes' },
  ],
  versionCommand: `HOME=/tmp ${BIN} --version`,
  output: agentLog('opencode.jsonl'),
  env: (run) => ({
    [KEY_VAR]: run.token,
    HOME: run.home,
    XDG_CONFIG_HOME: `${run.home}/.config`,
    XDG_DATA_HOME: `${run.home}/.local/share`,
    XDG_STATE_HOME: `${run.home}/.local/state`,
    // The sandbox reaches only the gateway: no models.dev catalogue, updates, LSP downloads or default plugins.
    OPENCODE_DISABLE_MODELS_FETCH: '1',
    OPENCODE_DISABLE_AUTOUPDATE: '1',
    OPENCODE_DISABLE_LSP_DOWNLOAD: '1',
    OPENCODE_DISABLE_DEFAULT_PLUGINS: '1',
    OPENCODE_FAKE_VCS: 'git',
  }),
  command: (run) => {
    const flags = [
      run.args['variant'] ? `--variant ${shellQuote(run.args['variant'])}` : '',
      run.args['agent'] ? `--agent ${shellQuote(run.args['agent'])}` : '',
    ].filter(Boolean).join(' ');
    return steps(
      writeFileCommand(`${run.home}/.config/opencode/opencode.json`, JSON.stringify(opencodeConfig(run))),
      copySkillsCommand(run, `${run.home}/.config/opencode/skills`),
      `${BIN} run --format json --model ${shellQuote(`berth/${run.model}`)} ${flags ? `${flags} ` : ''}--dangerously-skip-permissions ` +
        `-- "$(cat ${shellQuote(run.instructionFile)})" < /dev/null`,
    );
  },
  transcript: ({ stdout, sessionId, instruction, model }) => {
    const answers: AnswerStep[] = [];
    const notes: string[] = [];
    let step: AnswerStep | null = null;
    for (const e of jsonLines(stdout)) {
      const part = obj(e['part']);
      if (e['type'] === 'step_start') {
        step = { text: '', toolCalls: [], ...(typeof e['timestamp'] === 'number' ? { timestamp: new Date(e['timestamp']).toISOString() } : {}) };
        answers.push(step);
      } else if (e['type'] === 'step_finish') step = null;
      else if (e['type'] === 'error') notes.push(str(obj(obj(e['error'])['data'])['message']) || str(e['error']));
      else if (step && e['type'] === 'text') step.text += str(part['text']);
      else if (step && e['type'] === 'reasoning') step.reasoning = (step.reasoning ?? '') + str(part['text']);
      else if (step && e['type'] === 'tool_use') {
        const state = obj(part['state']);
        step.toolCalls.push({
          id: str(part['callID'] ?? part['id']), name: str(part['tool']), arguments: obj(state['input']),
          ...(state['output'] !== undefined ? { output: str(state['output']) } : {}),
        });
      }
    }
    return transcriptOf({ sessionId, agent: 'opencode', version: VERSION, model, instruction, answers, ...(notes.length ? { notes: notes.join('\n') } : {}) });
  },
};
