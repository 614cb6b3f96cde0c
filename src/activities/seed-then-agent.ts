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
import { agentTurnHere } from './turn.ts';
import type { SandboxRef, SeededAgentTurn, SeededSandboxDetail } from './types.ts';

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
