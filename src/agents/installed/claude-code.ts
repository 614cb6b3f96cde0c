// Claude Code (npm @anthropic-ai/claude-code): its npm package carries a native binary per platform
// (@anthropic-ai/claude-code-linux-x64); the layer holds that binary alone, so no Node.js is needed.
// It runs headless (`-p`, the instruction on stdin) and prints stream-json, which is what becomes ATIF.
import { shellQuote } from '../../sandbox/index.ts';
import { arr, jsonLines, obj, str, transcriptOf, type AnswerStep } from './transcript-parts.ts';
import { agentDir, agentLog, type AgentRun, type AgentTranscript, type InstalledAgent } from './types.ts';

const VERSION = '2.1.328';
const BIN = `${agentDir('claude-code')}/bin/claude`;
const mcpConfigPath = (run: AgentRun): string => `${run.home}/.claude/berth-mcp.json`;

/** `--mcp-config`'s file: each server as Claude Code names its transports (stdio, sse, http). */
function mcpConfig(run: AgentRun): string {
  const servers = Object.fromEntries(run.mcpServers.map((s) => [s.name, s.transport === 'stdio'
    ? { type: 'stdio', command: s.command, args: [...s.args] }
    : { type: s.transport === 'sse' ? 'sse' : 'http', url: s.url }]));
  return JSON.stringify({ mcpServers: servers }, null, 2);
}

function toolOutput(content: unknown): string {
  if (typeof content === 'string') return content;
  return arr(content).map((p) => str(obj(p)['text'])).join('');
}

/**
 * Claude Code's stream-json (`assistant` lines per content block, `user` lines with tool results, a closing
 * `result`) as ATIF; qwen-code's `-o stream-json` is the same format.
 */
export function claudeStreamJsonTranscript({ stdout, sessionId, instruction, model, agent, version }: {
  stdout: string; sessionId: string; instruction: string; model: string; agent: string; version: string;
}): AgentTranscript {
  const answers: AnswerStep[] = [];
  const byId = new Map<string, AnswerStep>();
  const calls = new Map<string, AnswerStep['toolCalls'][number]>();
  let result = '';
  for (const line of jsonLines(stdout)) {
    const message = obj(line['message']);
    if (line['type'] === 'assistant') {
      // One answer may come as several lines (one per content block) sharing the message id.
      const id = str(message['id']);
      let step = id ? byId.get(id) : undefined;
      if (!step) {
        step = { text: '', toolCalls: [], ...(typeof line['timestamp'] === 'string' ? { timestamp: line['timestamp'] } : {}) };
        answers.push(step);
        if (id) byId.set(id, step);
      }
      for (const block of arr(message['content']).map(obj)) {
        if (block['type'] === 'text') step.text += str(block['text']);
        else if (block['type'] === 'thinking') step.reasoning = (step.reasoning ?? '') + str(block['thinking']);
        else if (block['type'] === 'tool_use') {
          const call = { id: str(block['id']), name: str(block['name']), arguments: obj(block['input']) };
          step.toolCalls.push(call);
          calls.set(call.id, call);
        }
      }
    } else if (line['type'] === 'user') {
      for (const block of arr(message['content']).map(obj)) {
        const call = block['type'] === 'tool_result' ? calls.get(str(block['tool_use_id'])) : undefined;
        if (call) call.output = toolOutput(block['content']);
      }
    } else if (line['type'] === 'result') {
      result = str(line['result']);
    }
  }
  const t = transcriptOf({ sessionId, agent, version, model, instruction, answers });
  return { ...t, responseText: result || t.responseText };
}

export const claudeCode: InstalledAgent = {
  name: 'claude-code',
  version: VERSION,
  providers: ['anthropic'],
  protocol: () => 'anthropic-messages',
  install: { kind: 'npm-binary', package: '@anthropic-ai/claude-code-linux-x64', version: VERSION, file: 'claude' },
  options: [
    { name: 'max_turns', default: null, description: 'most agentic turns (claude --max-turns)' },
  ],
  versionCommand: `${BIN} --version`,
  output: agentLog('claude-code.jsonl'),
  env: (run) => ({
    ANTHROPIC_BASE_URL: run.gatewayUrl,
    ANTHROPIC_API_KEY: run.token,
    ANTHROPIC_MODEL: run.model,
    ANTHROPIC_SMALL_FAST_MODEL: run.model,
    HOME: run.home,
    // No telemetry, update checks or error reports: the sandbox reaches only the gateway.
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_AUTOUPDATER: '1',
    // --dangerously-skip-permissions is refused as root unless the process is told it is sandboxed.
    IS_SANDBOX: '1',
  }),
  configFiles: (run) => (run.mcpServers.length > 0 ? [{ path: mcpConfigPath(run), content: mcpConfig(run) }] : []),
  // User skills: ~/.claude/skills/<name>/SKILL.md.
  skillsHome: (run) => `${run.home}/.claude/skills`,
  command: (run) =>
    `${BIN} -p --output-format stream-json --verbose --dangerously-skip-permissions --model ${shellQuote(run.model)} ` +
    `${run.args['max_turns'] ? `--max-turns ${shellQuote(run.args['max_turns'])} ` : ''}` +
    `${run.mcpServers.length > 0 ? `--mcp-config ${shellQuote(mcpConfigPath(run))} ` : ''}` +
    `< ${shellQuote(run.instructionFile)}`,
  transcript: ({ stdout, sessionId, instruction, model }) => claudeStreamJsonTranscript({ stdout, sessionId, instruction, model, agent: 'claude-code', version: VERSION }),
};
