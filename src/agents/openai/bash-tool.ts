// The one tool the openai agent has: `bash`, run in the sandbox as the agent user. Each result is appended to
// the conversation file under its tool call id; a call whose result is already there is not run again.
import type { SandboxHandle, SandboxProvider } from '../../sandbox/index.ts';
import { appendRecord, readConversation, toolResultFor } from './conversation.ts';
import type { ToolCall } from './types.ts';

export const BASH_TOOL_NAME = 'bash';

/** The OpenAI function-tool definition sent with every request. */
export const BASH_TOOL = {
  type: 'function',
  function: {
    name: BASH_TOOL_NAME,
    description:
      'Run a bash command in the task sandbox, in the working directory, and return its exit code, stdout and stderr ' +
      '(long output keeps its last part). Each call is a new shell: use absolute paths or cd in the same command.',
    parameters: {
      type: 'object',
      properties: { command: { type: 'string', description: 'The bash command line to run.' } },
      required: ['command'],
    },
  },
} as const;

export const DEFAULT_TOOL_OUTPUT_CAP = 16 * 1024;

export interface BashToolInput {
  provider: SandboxProvider;
  handle: SandboxHandle;
  user: string;
  workdir: string;
  env: Record<string, string>;
  call: ToolCall;
  timeoutSec: number;
  conversationPath: string;
  /** Per stream; the last bytes are kept. */
  outputCapBytes?: number;
}

export interface BashToolResult {
  content: string;
  exitCode: number | null;
  timedOut: boolean;
  /** True when the result was already in the conversation file and nothing ran. */
  reused: boolean;
}

function commandOf(call: ToolCall): string | null {
  const c = call.arguments['command'] ?? call.arguments['cmd'];
  return typeof c === 'string' && c.trim() !== '' ? c : null;
}

function section(label: string, text: string, truncated: boolean, cap: number): string {
  const note = truncated ? ` (truncated: the last ${cap} bytes)` : '';
  return `[${label}${note}]\n${text}`;
}

export async function runBashTool(input: BashToolInput): Promise<BashToolResult> {
  const { call } = input;
  const existing = toolResultFor(await readConversation(input.conversationPath), call.id);
  if (existing && existing.message.role === 'tool') {
    return { content: existing.message.content, exitCode: existing.exit_code ?? null, timedOut: existing.timed_out ?? false, reused: true };
  }

  const command = commandOf(call);
  let content: string;
  let exitCode: number | null = null;
  let timedOut = false;
  if (call.name !== BASH_TOOL_NAME) {
    content = `error: there is no tool named "${call.name}"; the only tool is "${BASH_TOOL_NAME}" with {"command": "..."}`;
  } else if (command === null) {
    const why = call.argumentsError ?? 'the arguments have no "command" string';
    content = `error: ${why}; call ${BASH_TOOL_NAME} with {"command": "<bash command line>"}`;
  } else {
    const cap = input.outputCapBytes ?? DEFAULT_TOOL_OUTPUT_CAP;
    const res = await input.provider.exec(input.handle, {
      command,
      user: input.user,
      workdir: input.workdir,
      env: input.env,
      timeoutSec: Math.max(1, Math.floor(input.timeoutSec)),
      outputCapBytes: cap,
    });
    exitCode = res.exitCode;
    timedOut = res.timedOut;
    const head = timedOut ? `the command was stopped after ${Math.floor(input.timeoutSec)} s (time limit)\n` : '';
    content = [
      `${head}exit code: ${res.exitCode}`,
      section('stdout', res.stdout, res.stdoutTruncated, cap),
      section('stderr', res.stderr, res.stderrTruncated, cap),
    ].join('\n');
  }
  await appendRecord(input.conversationPath, {
    message: { role: 'tool', tool_call_id: call.id, content },
    ...(exitCode === null ? {} : { exit_code: exitCode }),
    ...(timedOut ? { timed_out: true } : {}),
  });
  return { content, exitCode, timedOut, reused: false };
}
