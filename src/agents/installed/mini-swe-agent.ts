// mini-SWE-agent (PyPI mini-swe-agent, Python >= 3.10): wheels fetched on the host for the image's Python and
// installed offline into the layer with pip run from its own wheel. It calls Chat Completions through litellm
// (one `bash` tool) and writes its trajectory file, which becomes ATIF. It has no MCP client and no skills folder, so
// it takes neither configFiles nor skillsHome: the task's servers and skills stay in /tmp/.berth/task.json.
import { shellQuote } from '../../sandbox/index.ts';
import { litellmEnv } from './agent-files.ts';
import { arr, obj, str, transcriptOf, type AnswerStep } from './transcript-parts.ts';
import { agentDir, agentLog, type InstalledAgent } from './types.ts';

const VERSION = '2.4.6';
const DIR = agentDir('mini-swe-agent');
const TRAJECTORY = agentLog('mini-swe-agent.traj.json');

export const miniSweAgent: InstalledAgent = {
  name: 'mini-swe-agent',
  version: VERSION,
  providers: ['openai', 'anthropic'],
  protocol: (provider) => (provider === 'anthropic' ? 'anthropic-messages' : 'openai-chat'),
  install: { kind: 'pypi', package: 'mini-swe-agent', version: VERSION, minPython: [3, 10] },
  options: [
    { name: 'cost_limit', default: '0', description: 'stop past this cost in USD by its own count (mini -l; 0: no limit, Berth\'s --max-cost applies)' },
  ],
  versionCommand: `PYTHONPATH=${DIR}/lib MSWEA_SILENT_STARTUP=1 python3 -c 'import minisweagent; print(minisweagent.__version__)'`,
  output: agentLog('mini-swe-agent.txt'),
  extraLogs: () => [TRAJECTORY],
  env: (run) => ({
    ...litellmEnv(run, `${DIR}/lib`),
    // First-run setup prompts and cost look-ups for unknown models are off.
    MSWEA_CONFIGURED: 'true',
    MSWEA_COST_TRACKING: 'ignore_errors',
    MSWEA_SILENT_STARTUP: '1',
    MSWEA_GLOBAL_CONFIG_DIR: `${run.home}/mini-swe-agent`,
  }),
  command: (run) =>
    `python3 -m minisweagent.run.mini -y --exit-immediately -l ${shellQuote(run.args['cost_limit'] ?? '0')} -m ${shellQuote(`${run.provider}/${run.model}`)} ` +
    `-t "$(cat ${shellQuote(run.instructionFile)})" -o ${TRAJECTORY}`,
  transcript: ({ files, sessionId, instruction, model }) => {
    let messages: unknown[] = [];
    let exitStatus = '';
    try {
      const t = obj(JSON.parse(files[TRAJECTORY] ?? '{}'));
      messages = arr(t['messages']);
    } catch {
      messages = [];
    }
    const answers: AnswerStep[] = [];
    const calls = new Map<string, AnswerStep['toolCalls'][number]>();
    for (const m of messages.map(obj)) {
      if (m['role'] === 'assistant') {
        const toolCalls = arr(m['tool_calls']).map(obj).map((c) => {
          const fn = obj(c['function']);
          let args: Record<string, unknown>;
          try {
            args = obj(JSON.parse(str(fn['arguments'])));
          } catch {
            args = { raw: str(fn['arguments']) };
          }
          const call = { id: str(c['id']), name: str(fn['name']), arguments: args };
          calls.set(call.id, call);
          return call;
        });
        answers.push({ text: str(m['content']), toolCalls });
      } else if (m['role'] === 'tool') {
        const call = calls.get(str(m['tool_call_id']));
        if (call) call.output = str(m['content']);
      } else if (m['role'] === 'exit') {
        exitStatus = str(obj(m['extra'])['exit_status']);
      }
    }
    return transcriptOf({ sessionId, agent: 'mini-swe-agent', version: VERSION, model, instruction, answers, ...(exitStatus ? { notes: `exit status: ${exitStatus}` } : {}) });
  },
};
