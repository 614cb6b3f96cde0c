// The oracle harness: runs the task's reference solution (Harbor 0.25), or submits
// solution/answer.md (Task Folder Verifiers, Reference answers).
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { removeIfThere, type DetachedOutput } from '../sandbox/index.ts';
import { resolveTemplates, SANDBOX_LAYOUT, SOLUTION_FILES, type Task } from '../task/index.ts';
import { agentStep, buildTrajectory, oracleTrajectory, userStep } from '../trajectory/atif.ts';
import { redact, redactFile } from '../trajectory/redact.ts';
import { runDetached, readTail } from './detached-run.ts';
import { SolutionEnvUnset } from './errors.ts';
import { AGENT_LOGS, copyLogToHost, OUTPUT_TAIL_BYTES, secondsSince, userOnlyTrajectory, writeTrajectory } from './logs.ts';
import { solutionForTurn } from '../task/index.ts';
import type { AgentHarness, AgentTurnContext, AgentTurnResult } from './types.ts';

export const SOLUTION_DIR = SANDBOX_LAYOUT.solutionDir;
/**
 * solve.sh is executed (made executable first), so its `#!` line picks the interpreter, as Harbor's oracle runs it;
 * the command runs under bash, which runs a script without a `#!` line itself.
 */
export const ORACLE_COMMAND = `${SOLUTION_DIR}/solve.sh`;
export const ORACLE_OUTPUT = `${AGENT_LOGS}/oracle.txt`;

/** `[solution].env` resolved from this worker's environment (and the values to keep out of transcripts and host logs); an unset `${VAR}` is a SolutionEnvUnset. */
export function solutionEnv(task: Task, hostEnv: Readonly<Record<string, string | undefined>> = process.env): { values: Record<string, string>; sensitive: string[] } {
  const res = resolveTemplates(task.solution.env, hostEnv);
  if (!res.ok) throw new SolutionEnvUnset(res.variable, task.path);
  return { values: res.values, sensitive: res.sensitive };
}

/** Empties /solution (what an earlier turn left) and, given a folder, places its contents there. */
async function placeSolution(ctx: AgentTurnContext, dir: string | null): Promise<void> {
  const run = async (command: string): Promise<void> => {
    const res = await ctx.provider.exec(ctx.handle, { command, user: 'root', workdir: '/', timeoutSec: 120 });
    if (res.exitCode !== 0) throw new Error(`preparing ${SOLUTION_DIR} in ${ctx.handle.name} failed (${res.exitCode}): ${res.stderr.trim()}`);
  };
  // -r: an earlier turn's agent may have left a folder where Berth's output file goes; it must not fail this turn.
  await run(`rm -rf ${SOLUTION_DIR} && mkdir -p -m 755 ${SOLUTION_DIR} && rm -rf ${ORACLE_OUTPUT}`);
  if (dir === null) return;
  await ctx.provider.upload(ctx.handle, dir, SOLUTION_DIR);
  await run(`chmod -R a+rX ${SOLUTION_DIR} && if [ -f ${SOLUTION_DIR}/solve.sh ]; then chmod +x ${SOLUTION_DIR}/solve.sh; fi`);
}

async function finish(ctx: AgentTurnContext, result: AgentTurnResult): Promise<AgentTurnResult> {
  await writeTrajectory(ctx, result.trajectory);
  return result;
}

/** Root shell that moves the staged solution to /solution (emptied first) and clears the previous output. */
function placeStagedSolution(): string {
  return [
    removeIfThere(SOLUTION_DIR, '-rf'),
    `[ -d "$BERTH_STAGE" ] || mkdir -p "$BERTH_STAGE"`,
    `mv "$BERTH_STAGE" ${SOLUTION_DIR} && chmod 755 ${SOLUTION_DIR}`,
    `chmod -R a+rX ${SOLUTION_DIR} && if [ -f ${SOLUTION_DIR}/solve.sh ]; then chmod +x ${SOLUTION_DIR}/solve.sh; fi`,
    removeIfThere(ORACLE_OUTPUT, '-rf'),
  ].join('\n');
}

/** The host copy of oracle.txt: straight from the tail when that is the whole file and plain UTF-8, else downloaded. */
async function keepOutput(ctx: AgentTurnContext, output: DetachedOutput | undefined, secrets: string[]): Promise<void> {
  const host = join(ctx.logsDir, 'oracle.txt');
  if (output === 'none') return;
  if (output !== undefined && output !== 'unreadable' && Buffer.byteLength(output.tail, 'utf8') === output.size && !output.tail.includes('\uFFFD')) {
    await writeFile(host, redact(output.tail, secrets));
    return;
  }
  if (await copyLogToHost(ctx, ORACLE_OUTPUT)) await redactFile(host, secrets);
}

async function runSolveSh(ctx: AgentTurnContext, dir: string, env: ReturnType<typeof solutionEnv>): Promise<AgentTurnResult> {
  const started = Date.now();
  const startedAt = new Date(started);
  const run = await runDetached(ctx, {
    prefix: 'oracle',
    command: ORACLE_COMMAND,
    env: { ...ctx.env, DEBIAN_FRONTEND: 'noninteractive', ...env.values },
    outputPath: ORACLE_OUTPUT,
    stage: dir,
    prepare: placeStagedSolution(),
    tailBytes: OUTPUT_TAIL_BYTES,
  });
  const secrets = env.sensitive;
  const tail = typeof run.output === 'object' ? run.output.tail : run.output === 'none' ? '' : await readTail(ctx, ORACLE_OUTPUT, OUTPUT_TAIL_BYTES);
  const output = redact(tail, secrets);
  await keepOutput(ctx, run.output, secrets);
  if (run.exitCode !== 0 && run.exitCode !== null) await writeFile(join(ctx.logsDir, 'exit-code.txt'), `${run.exitCode}\n`);
  const trajectory = oracleTrajectory({
    sessionId: ctx.runKey,
    instruction: ctx.instruction,
    command: ORACLE_COMMAND,
    output,
    exitCode: run.exitCode ?? undefined,
    startedAt,
    finishedAt: new Date(),
  });
  return finish(ctx, {
    responseText: '',
    exitCode: run.exitCode,
    timedOut: run.timedOut,
    trajectory,
    timings: { agent: secondsSince(started) },
  });
}

/** Copies answer.md byte for byte into the working directory, owned by the agent user; its text is the response. */
async function runAnswer(ctx: AgentTurnContext, dir: string): Promise<AgentTurnResult> {
  const started = Date.now();
  const bytes = await readFile(join(dir, SOLUTION_FILES.answerMd));
  await placeSolution(ctx, dir);
  await ctx.provider.upload(ctx.handle, [{ name: SOLUTION_FILES.answerMd, content: bytes, mode: 0o644 }], ctx.workdir, { owner: ctx.user });
  const text = bytes.toString('utf8');
  const target = `${ctx.workdir.replace(/\/+$/, '')}/answer.md`;
  const trajectory = buildTrajectory({
    sessionId: ctx.runKey,
    agent: { name: 'oracle', version: '1.0.0' },
    steps: [
      userStep(ctx.instruction, { timestamp: new Date(started) }),
      agentStep({ message: text, llmCallCount: 0, timestamp: new Date(), extra: { reference_answer: 'solution/answer.md', written_to: target } }),
    ],
  });
  return finish(ctx, { responseText: text, exitCode: null, timedOut: false, trajectory, timings: { agent: secondsSince(started) } });
}

export async function runOracleTurn(ctx: AgentTurnContext): Promise<AgentTurnResult> {
  const solution = solutionForTurn(ctx.task, ctx.stepIndex);
  if (solution.kind === 'missing') {
    const started = Date.now();
    await placeSolution(ctx, null);
    return finish(ctx, {
      responseText: '',
      exitCode: null,
      timedOut: false,
      trajectory: userOnlyTrajectory(ctx, 'oracle', `no reference solution: ${solution.reason}`),
      timings: { agent: secondsSince(started) },
      missingSolution: true,
    });
  }
  const env = solutionEnv(ctx.task);
  return solution.kind === 'answer_md' ? runAnswer(ctx, solution.dir) : runSolveSh(ctx, solution.dir, env);
}

export const oracleHarness: AgentHarness = { name: 'oracle', runTurn: runOracleTurn };
