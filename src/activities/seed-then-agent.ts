// The seed and the first turn's agent in one activity (docs/performance-notes.md, One activity for the seed and the agent):
// they always run back to back on the same host, so a single-step episode spares one activity's dispatch and one
// workflow task. Each part keeps its guarantees: the seed is create-or-adopt and recorded once finished
// (seed-record.ts), so a retried attempt goes straight to the agent, which re-attaches to the process already
// running (run-keyed markers); a seed failure keeps its own kind and carries no sandbox, while a failure of the agent
// carries the sandbox it ran in, so the workflow tells the two apart.
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { HostServices } from '../host/deps.ts';
import { beating } from './beating.ts';
import { typed } from './failures.ts';
import { seedOnThisHost, type SeedRequest } from './host.ts';
import { episodeLogsDir } from '../host/logs.ts';
import { recordedSeed, recordSeed } from '../host/seed-record.ts';
import { agentTurnHere, verifyTurnHere } from './turn.ts';
import type { AfterLastVerify, SandboxRef, SeededAgentTurn, SeededSandboxDetail, SeededVerifiedTurn } from './types.ts';

export async function seedThenAgentTurn(deps: HostServices, req: SeedRequest): Promise<SeededAgentTurn> {
  return beating(async () => {
    const started = Date.now();
    const sandbox = await typed(() => seededSandbox(deps, req));
    const seedSec = (Date.now() - started) / 1000;
    try {
      // A cancelled episode stops here, its sandbox made (the workflow waits for this: teardown never races a create).
      Context.current().cancellationSignal.throwIfAborted();
      const agent = await typed(() => agentTurnHere(deps, { input: req.input, plan: req.plan, sandbox, turn: 0 }));
      return { sandbox, agent, seedSec };
    } catch (err) {
      throw withSeededSandbox(err, sandbox);
    }
  });
}

/**
 * A single-step episode's whole turn in one activity (docs/performance-notes.md, One activity for a single-step
 * episode): the seed, the agent and the verification, which then hands the sandbox to removal (and, asked to, frees
 * the batch's slot and uploads a small attempt), as seedThenAgentTurn and the last verifyTurn do one after the other.
 * A retried attempt goes straight to the agent (the seed recorded), which re-attaches to its process (run-keyed
 * markers), then verifies again, as a retried verifyTurn does. The verification keeps its own time limit: past it, it
 * is stopped and the attempt fails as a verifyTurn past its start-to-close timeout did (retried, then masked).
 */
export async function seedAgentVerifyTurn(deps: HostServices, req: SeedRequest & { afterLast?: AfterLastVerify }): Promise<SeededVerifiedTurn> {
  return beating(async () => {
    const started = Date.now();
    const sandbox = await typed(() => seededSandbox(deps, req));
    const seedSec = (Date.now() - started) / 1000;
    try {
      const cancelled = Context.current().cancellationSignal;
      cancelled.throwIfAborted();
      const turn = { input: req.input, plan: req.plan, sandbox, turn: 0 };
      const agent = await typed(() => agentTurnHere(deps, turn));
      cancelled.throwIfAborted();
      const verified = await typed(() => withinLimit(req.plan.steps[0]!.verifyTimeoutSec, cancelled, (signal) => verifyTurnHere(deps, {
        ...turn, agentTimings: agent.timings, ...(agent.usage ? { usage: agent.usage } : {}), ...(agent.agentOutcome ? { agentOutcome: agent.agentOutcome } : {}),
        teardownAfter: true, ...(req.afterLast ? { afterLast: req.afterLast } : {}),
      }, signal)));
      return { sandbox, seedSec, verified };
    } catch (err) {
      throw withSeededSandbox(err, sandbox);
    }
  });
}

/**
 * `run` under a limit of `sec` seconds (none when undefined), stopped through its signal when the limit passes or
 * `outer` aborts. Past the limit: a retryable provider_unavailable, what a timed-out verifyTurn came to.
 */
export async function withinLimit<T>(sec: number | undefined, outer: AbortSignal, run: (signal: AbortSignal) => Promise<T>): Promise<T> {
  if (sec === undefined) return run(outer);
  const stop = new AbortController();
  const onOuter = () => stop.abort(outer.reason);
  outer.addEventListener('abort', onOuter, { once: true });
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      // The limit's failure first: the stopped run's own rejection must not win the race.
      reject(ApplicationFailure.retryable(`the verification ran past its limit of ${sec} s (collect hooks, the verifier's start, test.sh)`, 'provider_unavailable'));
      stop.abort();
    }, sec * 1000);
  });
  try {
    return await Promise.race([run(stop.signal), limit]);
  } finally {
    clearTimeout(timer);
    outer.removeEventListener('abort', onOuter);
  }
}

/** This run's sandbox: the one a finished seed recorded (a retried attempt), else seeded now and recorded. */
async function seededSandbox(deps: HostServices, req: SeedRequest): Promise<SandboxRef> {
  const logsDir = episodeLogsDir(req.workflowId, req.runId);
  const recorded = recordedSeed(logsDir);
  if (recorded) {
    await deps.slots.seeded(req.workflowId, req.runId);
    return recorded;
  }
  // The agent runs next in this activity: a driver may confirm the sandbox's setup in the agent's first exec.
  const sandbox = await seedOnThisHost(deps, req, { firstExecHere: true });
  recordSeed(logsDir, sandbox);
  return sandbox;
}

/**
 * A final failure of the agent part, carrying the sandbox it ran in (the row keeps its logs folder; the workflow knows
 * the seed succeeded). Anything else (a retryable error, a cancellation) is left as it is.
 */
export function withSeededSandbox(err: unknown, sandbox: SandboxRef): unknown {
  if (!(err instanceof ApplicationFailure)) return err;
  const detail: SeededSandboxDetail = { seededSandbox: sandbox };
  return ApplicationFailure.create({
    type: err.type ?? undefined, message: err.message, nonRetryable: err.nonRetryable ?? undefined, details: [...(err.details ?? []), detail], ...(err.cause ? { cause: err.cause } : {}),
  });
}
