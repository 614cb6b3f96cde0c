import { ApplicationFailure, Context } from '@temporalio/activity';
import { mkdirSync } from 'node:fs';
import { containerName, SandboxNeverReady, SeedFailed } from '../sandbox/index.ts';
import { redact } from '../verify/index.ts';
import type { EpisodeInput, EpisodePlan, SandboxRef } from './types.ts';
import { typed } from './failures.ts';
import type { HostServices } from '../host/deps.ts';
import { episodeLogsDir } from '../host/logs.ts';
import { agentSeedSpec, seedAgentFromSpec } from '../host/seed-agent.ts';
import { seedKey } from '../host/seed-key.ts';
import { seedComposeSandbox } from '../host/seed-compose.ts';
import { tearDownEpisode } from '../host/tear-down.ts';
import { beating } from './beating.ts';
import { hiddenValuesOf } from '../host/hidden.ts';

/** A healthcheck's or entrypoint's output may hold what [environment].env gave main (docs/design.md section 7 "Secrets"). */
function redacted(err: unknown, hidden: readonly string[]): unknown {
  if (err instanceof SandboxNeverReady) return new SandboxNeverReady(redact(err.message, hidden), redact(err.output, hidden));
  return err instanceof SeedFailed ? new SeedFailed(err.kind, redact(err.message, hidden), redact(err.output, hidden)) : err;
}

/**
 * A seed failure a fresh seed may not repeat (a sandbox that never became ready: a healthcheck that never passed, as
 * the spec says) is retried while this activity has attempts left; the last attempt fails the seed with its output.
 */
function retryWhileAttemptsLeft(err: unknown): unknown {
  if (!(err instanceof SandboxNeverReady)) return err;
  const { attempt, retryPolicy } = Context.current().info;
  const max = retryPolicy?.maximumAttempts ?? 0;
  if (max > 0 && attempt < max) return ApplicationFailure.retryable(`seed attempt ${attempt} of ${max}: ${err.message}`, 'berth:seed_retry', err.output);
  return err;
}

/** Create-or-adopt the agent's sandbox: image ready, container started, overlay, entrypoint, healthchecks. */
export async function seed(deps: HostServices, req: SeedRequest): Promise<SandboxRef> {
  return typed(() => beating(() => seedOnThisHost(deps, req)));
}

/** What seeding an episode's sandbox takes: the episode, its plan and its workflow run. */
export interface SeedRequest { input: EpisodeInput; plan: EpisodePlan; workflowId: string; runId: string }

/** How a seed is used next: `firstExecHere`, the caller's next calls on the sandbox are this process's (readyOnFirstExec). */
interface SeedUse {
  firstExecHere?: boolean;
}

/** The seed's work, for activities that run it (seed, seedThenAgentTurn); errors untyped. */
export async function seedOnThisHost(deps: HostServices, req: SeedRequest, use: SeedUse = {}): Promise<SandboxRef> {
  const { filesQueue } = deps.identity;
  // The seeding worker keeps the episode's files where several machines share the sandbox queue (files-home.ts).
  return { ...await seedHere(deps, req, use), ...(filesQueue ? { filesQueue } : {}) };
}

async function seedHere(deps: HostServices, req: SeedRequest, use: SeedUse): Promise<SandboxRef> {
  // The slot is marked seeded beside the seed, not before it (on a cluster a Lease write, a round trip of the
  // apiserver's): a reservation is freed unseeded only after seedBoundMs, minutes, and a retried attempt marks it again.
  const marking = deps.slots.seeded(req.workflowId, req.runId);
  let sandbox: SandboxRef;
  try {
    sandbox = await seedMarked(deps, req, use);
  } catch (err) {
    await marking.catch(() => undefined); // the seed's own failure is the one to report
    throw err;
  }
  await marking;
  return sandbox;
}

async function seedMarked(deps: HostServices, req: SeedRequest, use: SeedUse): Promise<SandboxRef> {
  const { host, queue } = deps.identity;
  const task = await deps.loadEpisodeTask(req.input);
  const logsDir = episodeLogsDir(req.workflowId, req.runId);
  mkdirSync(logsDir, { recursive: true });
  const labels = { batch: req.input.batchId, workflowId: req.workflowId, role: 'agent' } as const;
  const hidden = hiddenValuesOf(task);
  if (task.compose) {
    return seedComposeSandbox(deps, task, req, { host, queue, logsDir, labels, hostEnv: process.env }).catch((err: unknown) => { throw retryWhileAttemptsLeft(redacted(err, hidden)); });
  }
  const name = containerName(req.workflowId, req.runId, 'agent');
  const seeded = await (async () => {
    const spec = await agentSeedSpec(deps, task, {
      name, labels, imageAliases: req.input.imageAliases, ...(req.input.baseImageId ? { baseImageId: req.input.baseImageId } : {}), hostEnv: process.env,
      agent: req.input.agent,
    });
    // A batch without the pool claims nothing (no key), but still removes a pooled sandbox its reservation took over.
    const key = req.input.episodeSettings.warmPool === false ? undefined : seedKey(task, spec, req.input.agent);
    const claimed = await deps.pool?.claim({ key, workflowId: req.workflowId, name, batchId: req.input.batchId });
    const seedSpec = use.firstExecHere ? { ...spec, readyOnFirstExec: true } : spec;
    const handle = claimed ?? await seedAgentFromSpec(deps, task, seedSpec, req.input.agent, { logsDir, hidden: () => hidden });
    if (!claimed) deps.pool?.seeded(key);
    return { handle, spec, claimed: claimed !== undefined };
  })().catch((err: unknown) => { throw retryWhileAttemptsLeft(redacted(err, hidden)); });
  deps.pool?.serve(req.input, Context.current().client);
  const { handle, spec } = seeded;
  return {
    queue, name: handle.name, id: handle.containerId, host, user: handle.user, workdir: handle.workdir, logsDir,
    ...(spec.entrypoint ? { entrypoint: true } : {}),
    ...(seeded.claimed ? { claimed: true } : {}),
  };
}

/**
 * Hands the episode's sandboxes to this host's remover and returns at once: removal is off the
 * episode's critical path, and the episode's slot is freed only once they are gone. By name, so a
 * seed that finished after a cancellation, or a separate verifier's sandbox, goes too. Idempotent.
 *
 * If this worker dies before they are gone, the journal makes its next start remove them. The
 * janitor alone would not: at that start the episode is usually still RUNNING (closing it takes a
 * workflow task that only a live worker runs), and the janitor keeps a running episode's containers.
 */
export async function teardown(deps: HostServices, req: { episodeId: string; runId: string }): Promise<void> {
  await tearDownEpisode(deps, req.episodeId, req.runId);
}
