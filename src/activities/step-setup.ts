// A step's own preparation, before its agent (Harbor 0.25, Harbor's _prepare_step): as the
// step's agent user, steps/<name>/workdir/* is uploaded into the working directory and `bash <workdir>/setup.sh` runs
// there when the folder has one; then [steps.healthcheck] is polled with [environment.healthcheck]'s semantics. A
// failure ends the episode as harbor:step_setup_failed (masked on the first step, scored 0 on a later one: src/outcomes).
import { ApplicationFailure, Context } from '@temporalio/activity';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DETACHED_BASE, SeedFailed, shellQuote, type ExecResult } from '../sandbox/index.ts';
import type { Step, Task } from '../task/index.ts';
import { EXEC_OVERHEAD_SEC, healthcheckWorstSec } from './budget.ts';
import type { TurnRef } from './types.ts';
import { beating } from './beating.ts';
import { typed } from './failures.ts';
import { handleOf, phaseTargets } from '../host/handle.ts';
import { turnDirOf } from '../host/logs.ts';
import { enterPhase } from '../host/phase-network.ts';
import type { HostServices } from '../host/deps.ts';
import { agentUserFor } from './turn.ts';
import { hiddenValuesOf } from '../host/hidden.ts';
import { redact } from '../verify/index.ts';

const OUTPUT_CHARS = 4000;

/** `hidden`: setup.sh and the healthcheck run with [environment].env, and may print it (docs/design.md section 7 "Secrets"). */
const stepFailed = (step: Step, problem: string, hidden: readonly string[]): ApplicationFailure =>
  ApplicationFailure.nonRetryable(`step "${step.name}": ${redact(problem, hidden)}`, 'harbor:step_setup_failed');

function tail(res: ExecResult): string {
  const text = [res.stdout, res.stderr].filter((t) => t.trim() !== '').join('\n').trim();
  return text.length > OUTPUT_CHARS ? `…${text.slice(-OUTPUT_CHARS)}` : text;
}

/** Whether a step has anything to prepare (the plan's `setupSec` is set exactly then). */
export function stepNeedsSetup(step: Step): boolean {
  return step.workdir !== null || step.healthcheck !== null;
}

/** Seconds the preparation may take: the upload, setup.sh within build_timeout_sec, then the healthcheck's worst case. */
export function stepSetupBudgetSec(task: Task, step: Step): number {
  const hcSec = step.healthcheck === null ? 0 : healthcheckWorstSec(step.healthcheck) + EXEC_OVERHEAD_SEC;
  return (step.setup_script ? task.environment.build_timeout_sec + EXEC_OVERHEAD_SEC : 0) + hcSec + EXEC_OVERHEAD_SEC;
}

export async function stepSetup(deps: HostServices, req: TurnRef): Promise<void> {
  return typed(() => beating(async () => {
    const task = await deps.loadEpisodeTask(req.input);
    const step = task.steps[req.turn];
    if (!step || !stepNeedsSetup(step)) return;
    const { provider } = deps;
    const handle = handleOf(req.sandbox);
    // Once per turn: a retried attempt after a finished setup does not run setup.sh a second time.
    const { runId } = Context.current().info.workflowExecution ?? { runId: 'local' };
    const done = shellQuote(`${DETACHED_BASE}/step-setup-${runId}-t${req.turn + 1}`);
    if ((await provider.exec(handle, { command: `test -e ${done}`, user: 'root', workdir: '/' })).exitCode === 0) return;

    const user = await agentUserFor(provider, task, req);
    const as = { ...handle, user };
    const hidden = hiddenValuesOf(task);
    // Harbor prepares a step outside its agent phase's network policy: on the environment's baseline.
    await enterPhase(deps, task, phaseTargets(req.sandbox), req.turn, 'baseline', req.input.agent);
    if (step.workdir !== null) await provider.upload(as, step.workdir, handle.workdir, { owner: user });
    if (step.setup_script) {
      const script = `${handle.workdir.replace(/\/+$/, '')}/setup.sh`;
      const timeoutSec = task.environment.build_timeout_sec;
      const res = await provider.exec(as, { command: `bash ${shellQuote(script)}`, user, workdir: handle.workdir, timeoutSec, outputCapBytes: 256 * 1024 });
      const dir = turnDirOf(req);
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, 'setup-output.txt'), redact(`${res.stdout}${res.stderr}`, hidden));
      if (res.timedOut) throw stepFailed(step, `workdir/setup.sh ran past [environment].build_timeout_sec (${timeoutSec} s); its output:\n${tail(res)}`, hidden);
      if (res.exitCode !== 0) throw stepFailed(step, `workdir/setup.sh exited with code ${res.exitCode}; its output:\n${tail(res)}`, hidden);
    }
    if (step.healthcheck !== null) {
      const hc = step.healthcheck;
      try {
        await provider.pollHealthcheck(as, {
          command: hc.command, intervalSec: hc.interval_sec, timeoutSec: hc.timeout_sec,
          startPeriodSec: hc.start_period_sec, startIntervalSec: hc.start_interval_sec, retries: hc.retries,
        }, Boolean(req.sandbox.entrypoint), user);
      } catch (err) {
        // The image's entrypoint dying is its own kind; a healthcheck that never passed is the step's.
        if (err instanceof SeedFailed && err.kind === 'harbor:seed_failed') throw stepFailed(step, `[steps.healthcheck] ${err.message}`, hidden);
        throw err;
      }
    }
    await provider.exec(handle, { command: `mkdir -p -m 1777 ${shellQuote(DETACHED_BASE)} && touch ${done}`, user: 'root', workdir: '/' });
  }));
}
