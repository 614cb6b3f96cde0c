// Aider (PyPI aider-chat, Python >= 3.10 < 3.13): wheels fetched on the host for the image's Python and installed
// offline into the layer, as mini-swe-agent is. It runs one message headless (`--message-file`, `--yes-always`,
// no git, no update checks or analytics) through litellm at the gateway. Aider edits files from the model's text
// rather than by tool calls: each edit it applies (its "Applied edit to <file>" lines) becomes a tool call in the
// ATIF trajectory, beside the model's answers from its LLM history file.
import { shellQuote } from '../../sandbox/index.ts';
import { litellmEnv } from './agent-files.ts';
import { transcriptOf, type AnswerStep } from './transcript-parts.ts';
import { agentDir, agentLog, type InstalledAgent } from './types.ts';

const VERSION = '0.86.2';
const DIR = agentDir('aider');
const LLM_HISTORY = agentLog('aider.llm-history.txt');
const CHAT_HISTORY = agentLog('aider.chat-history.md');

/** The model's answers in aider's --llm-history-file: each `LLM RESPONSE <time>` block's ASSISTANT text. */
export function aiderAnswers(history: string): Array<{ text: string; timestamp?: string }> {
  const out: Array<{ text: string; timestamp?: string }> = [];
  for (const block of history.split(/^(?=TO LLM |LLM RESPONSE )/m)) {
    const m = /^LLM RESPONSE (\S+)\n([\s\S]*)$/.exec(block);
    if (!m) continue;
    const text = m[2]!.replace(/^ASSISTANT ?/gm, '').trim();
    out.push({ text, ...(Date.parse(m[1]!) ? { timestamp: new Date(m[1]!).toISOString() } : {}) });
  }
  return out;
}

export const aider: InstalledAgent = {
  name: 'aider',
  version: VERSION,
  providers: ['openai', 'anthropic'],
  protocol: (provider) => (provider === 'anthropic' ? 'anthropic-messages' : 'openai-chat'),
  install: { kind: 'pypi', package: 'aider-chat', version: VERSION, minPython: [3, 10] },
  options: [
    { name: 'edit_format', default: null, description: 'how the model writes edits (aider --edit-format; its default depends on the model)', choices: ['whole', 'diff', 'diff-fenced', 'udiff', 'architect'] },
    { name: 'reasoning_effort', default: null, description: 'reasoning effort (aider --reasoning-effort)' },
    { name: 'map_tokens', default: '1024', description: 'tokens for the repository map (aider --map-tokens; 0 turns it off)' },
  ],
  versionCommand: `PYTHONPATH=${DIR}/lib python3 -c 'import aider; print(aider.__version__)'`,
  output: agentLog('aider.txt'),
  extraLogs: () => [LLM_HISTORY, CHAT_HISTORY],
  env: (run) => ({
    ...litellmEnv(run, `${DIR}/lib`),
    AIDER_CHECK_UPDATE: 'false',
    AIDER_ANALYTICS: 'false',
  }),
  command: (run) => {
    const a = run.args;
    const flags = [
      a['edit_format'] ? `--edit-format ${shellQuote(a['edit_format'])}` : '',
      a['reasoning_effort'] ? `--reasoning-effort ${shellQuote(a['reasoning_effort'])}` : '',
      `--map-tokens ${shellQuote(a['map_tokens'] ?? '1024')}`,
    ].filter(Boolean).join(' ');
    return `python3 -m aider --model ${shellQuote(`${run.provider}/${run.model}`)} --message-file ${shellQuote(run.instructionFile)} ` +
      '--yes-always --no-git --no-auto-commits --no-check-update --no-analytics --no-show-model-warnings --no-show-release-notes ' +
      `--no-pretty --no-fancy-input --no-detect-urls --llm-history-file ${LLM_HISTORY} --chat-history-file ${CHAT_HISTORY} ${flags} < /dev/null`;
  },
  transcript: ({ stdout, files, sessionId, instruction, model }) => {
    const answers: AnswerStep[] = aiderAnswers(files[LLM_HISTORY] ?? '').map((x) => ({ text: x.text, toolCalls: [], ...(x.timestamp ? { timestamp: x.timestamp } : {}) }));
    const edits = [...stdout.matchAll(/^Applied edit to (.+)$/gm)].map((m, i) => ({ id: `edit-${i + 1}`, name: 'apply_edit', arguments: { path: m[1]!.trim() }, output: 'applied' }));
    // Aider applies an answer's edits after it has arrived: they belong to the last answer.
    const last = answers[answers.length - 1];
    if (last) last.toolCalls.push(...edits);
    else if (edits.length) answers.push({ text: '', toolCalls: edits });
    const errors = stdout.split('\n').filter((l) => /litellm\.|Error:/.test(l)).slice(0, 5);
    return transcriptOf({ sessionId, agent: 'aider', version: VERSION, model, instruction, answers, ...(errors.length ? { notes: errors.join('\n') } : {}) });
  },
};
