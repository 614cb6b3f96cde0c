// The command harness: runs a user-given command line inside the sandbox (--agent-arg cmd=...).
//
// What the command gets: the instruction in /logs/agent/instruction.md, its path in BERTH_INSTRUCTION_FILE,
// and its text in BERTH_INSTRUCTION (left out when longer than 64 KiB: read the file then); BERTH_TASK_FILE when
// the task declares MCP servers or a skills folder (task-file.ts); the turn's
// environment; the agent user and working directory; the turn's budget (it is killed after it).
// What it leaves: stdout in /logs/agent/command.txt, stderr in /logs/agent/command.stderr.txt.
// The response is the content of /logs/agent/response.txt when the command wrote one (up to 1 MiB, the
// last bytes kept), else the last 64 KiB of its stdout. A non-zero exit is recorded, not an error.
import { TASK_FILE, TASK_FILE_ENV, taskFileContent } from './task-file.ts';
import { shellQuote } from '../sandbox/index.ts';
import { agentStep, buildTrajectory, userStep } from '../trajectory/atif.ts';
import { runDetached } from './detached-run.ts';
import { AgentConfigError } from './errors.ts';
import { AGENT_LOGS, copyLogToHost, OUTPUT_TAIL_BYTES, secondsSince, writeTrajectory } from './logs.ts';
import type { AgentHarness, AgentTurnContext, AgentTurnResult } from './types.ts';

export const COMMAND_STDOUT = `${AGENT_LOGS}/command.txt`;
export const COMMAND_STDERR = `${AGENT_LOGS}/command.stderr.txt`;
export const INSTRUCTION_FILE = `${AGENT_LOGS}/instruction.md`;
export const RESPONSE_FILE = `${AGENT_LOGS}/response.txt`;
export const ENV_INSTRUCTION_MAX_BYTES = 64 * 1024;
const RESPONSE_FILE_MAX_BYTES = 1024 * 1024;

export function commandOf(args: Record<string, string>): string {
  const cmd = args['cmd'];
  if (cmd === undefined || cmd.trim() === '') {
    throw new AgentConfigError(
      'the command agent needs the command line to run inside the sandbox: pass --agent-arg cmd="<command>" ' +
        '(it reads the instruction from $BERTH_INSTRUCTION_FILE or $BERTH_INSTRUCTION)',
    );
  }
  return cmd;
}

export function commandEnv(ctx: AgentTurnContext): Record<string, string> {
  const env: Record<string, string> = { ...ctx.env, BERTH_INSTRUCTION_FILE: INSTRUCTION_FILE };
  if (taskFileContent(ctx.task, ctx.workdir)) env[TASK_FILE_ENV] = TASK_FILE;
  if (Buffer.byteLength(ctx.instruction, 'utf8') <= ENV_INSTRUCTION_MAX_BYTES) env['BERTH_INSTRUCTION'] = ctx.instruction;
  return env;
}

/** Clears the previous turn's files and moves the staged instruction into place, owned by the agent user. */
function prepareScript(ctx: AgentTurnContext): string {
  const stale = [COMMAND_STDOUT, COMMAND_STDERR, RESPONSE_FILE, INSTRUCTION_FILE].map(shellQuote).join(' ');
  return [
    // -r: an earlier turn's agent may have left a folder where one of these files goes; it must not fail this turn.
    `rm -rf ${stale}`,
    `mv "$BERTH_STAGE/instruction.md" ${shellQuote(INSTRUCTION_FILE)} && rm -rf "$BERTH_STAGE"`,
    `chown ${shellQuote(ctx.user)} -- ${shellQuote(INSTRUCTION_FILE)}`,
  ].join('\n');
}

async function readResponse(ctx: AgentTurnContext): Promise<{ text: string; from: 'response.txt' | 'stdout'; stdoutTail: string }> {
  const res = await ctx.provider.exec(ctx.handle, {
    command: [
      `tail -c ${OUTPUT_TAIL_BYTES} ${shellQuote(COMMAND_STDOUT)} 2>/dev/null; printf '\\0'`,
      `if [ -f ${shellQuote(RESPONSE_FILE)} ]; then printf 'file\\0'; tail -c ${RESPONSE_FILE_MAX_BYTES} ${shellQuote(RESPONSE_FILE)}; fi`,
    ].join('\n'),
    user: 'root',
    workdir: '/',
    timeoutSec: 60,
    outputCapBytes: OUTPUT_TAIL_BYTES + RESPONSE_FILE_MAX_BYTES + 1024,
  });
  const cut = res.stdout.indexOf('\0');
  // A tail may start inside a multi-byte character: drop the undecodable head.
  const stdoutTail = res.stdout.slice(0, cut < 0 ? undefined : cut).replace(/^\uFFFD+/, '');
  const rest = cut < 0 ? '' : res.stdout.slice(cut + 1);
  if (rest.startsWith('file\0')) return { text: rest.slice('file\0'.length), from: 'response.txt', stdoutTail };
  return { text: stdoutTail, from: 'stdout', stdoutTail };
}

export async function runCommandTurn(ctx: AgentTurnContext): Promise<AgentTurnResult> {
  const cmd = commandOf(ctx.args);
  const started = Date.now();
  // stderr goes to its own file so the detached output file (command.txt) is stdout alone.
  const script = `exec 2>>${shellQuote(COMMAND_STDERR)}\n${cmd}\n`;
  const run = await runDetached(ctx, {
    prefix: 'command',
    command: script,
    env: commandEnv(ctx),
    outputPath: COMMAND_STDOUT,
    stage: [{ name: 'instruction.md', content: ctx.instruction, mode: 0o644 }],
    prepare: prepareScript(ctx),
  });
  const response = await readResponse(ctx);
  for (const f of [COMMAND_STDOUT, COMMAND_STDERR, RESPONSE_FILE]) await copyLogToHost(ctx, f);
  const trajectory = buildTrajectory({
    sessionId: ctx.runKey,
    agent: { name: 'command', version: '1.0.0' },
    steps: [
      userStep(ctx.instruction, { timestamp: new Date(started) }),
      agentStep({
        message: response.text,
        llmCallCount: 0,
        timestamp: new Date(),
        toolCalls: [{ id: 'command', name: 'bash', arguments: { command: cmd }, output: response.stdoutTail }],
        extra: { exit_code: run.exitCode, timed_out: run.timedOut, response_from: response.from, ...(run.lost ? { ended_unrecorded: run.lost } : {}) },
      }),
    ],
  });
  await writeTrajectory(ctx, trajectory);
  return { responseText: response.text, exitCode: run.exitCode, timedOut: run.timedOut, trajectory, timings: { agent: secondsSince(started) } };
}

export const commandHarness: AgentHarness = { name: 'command', runTurn: runCommandTurn };
