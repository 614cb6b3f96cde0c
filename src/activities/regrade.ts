// The regrade's one host activity: verification run again for a finished episode, without its agent. Separate mode
// restores the artifacts the first verification collected into a fresh verifier; shared mode starts a sandbox from the
// final state kept by --keep-final-state. Either way the task's tests/ are read afresh. The attempt's files come from
// this host's disk, or, when they are not here (another host ran it, or keep_local = false), from the results store.
import { ApplicationFailure, Context, heartbeat, sleep } from '@temporalio/activity';
import { existsSync } from 'node:fs';
import { cp, mkdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { containerName, finalStateImage, LABEL_USER, LABEL_WORKDIR, type SandboxHandle } from '../sandbox/index.ts';
import { loadBerthConfig } from '../config/berth-config.ts';
import type { Task } from '../task/index.ts';
import { copiedFromManifest, runVerification, type VerifyContext, type VerifyResult } from '../verify/index.ts';
import type { AtifTrajectory } from '../verify/index.ts';
import { REGRADE_REFUSED } from '../outcomes/index.ts';
import { downloadAttempt, readManifest } from '../store/index.ts';
import { hostStore } from './store-client.ts';
import { withoutSecrets } from './store-files.ts';
import type { RegradeInput } from './types.ts';
import type { EpisodePlan, TurnOutcome } from './types.ts';
import { beating } from './beating.ts';
import { typed } from './failures.ts';
import { environmentOf } from '../host/seed-agent.ts';
import { agentSandboxNetwork } from '../host/phase-network.ts';
import { episodeLogsDir, turnLogsDir } from '../host/logs.ts';
import type { HostServices } from '../host/deps.ts';
import { agentSandboxSpec } from '../host/sandbox-spec.ts';
import { turnOutcomeOf } from './turn.ts';
import { hiddenValuesOf } from '../host/hidden.ts';

const refused = (message: string) => ApplicationFailure.nonRetryable(message, REGRADE_REFUSED);

/** A slot of this host, as an episode takes one: a regrade of a whole batch runs as many at once as episodes do. */
async function withSlot<T>(deps: HostServices, workflowId: string, runId: string, fn: () => Promise<T>): Promise<T> {
  const { identity: { host }, slots } = deps;
  while (!(await slots.tryReserve(workflowId, runId))) {
    heartbeat({ waiting: { host, inUse: slots.inUse, capacity: slots.capacity } });
    await Promise.race([sleep(1000), slots.changed(1000)]);
  }
  // Marked as a sandbox being made, so no waiter takes the slot for one reserved and never used.
  await slots.seeded(workflowId, runId);
  try {
    return await fn();
  } finally {
    // Its sandboxes are removed before this returns: the slot is free at once.
    await slots.free(workflowId);
  }
}

/** The attempt's turn folder as its manifest names it (relative to the attempt's logs folder): `turn-1`. */
const SOURCE_TURN = turnLogsDir('', 0, null);

const noKeptState = (deps: HostServices, input: RegradeInput): string => input.anyHost
  ? `a shared-mode regrade verifies the final state kept by --keep-final-state on the host that ran ${input.from.workflowId} (${input.from.host ?? 'its host'}, queue ${input.from.queue}), and no worker of that host is running: image ${finalStateImage(input.stateOf.workflowId, input.stateOf.runId)} is not on ${deps.identity.host}, where the results store's copy of its logs would be read. Start a worker on ${input.from.host ?? 'that host'} again, or retry the episode (berth retry BATCH --task ${input.episode.taskId})`
  : `no final state of ${input.stateOf.workflowId} is kept on this host (image ${finalStateImage(input.stateOf.workflowId, input.stateOf.runId)}): a shared-mode regrade needs the batch run with --keep-final-state, and the image not yet removed (berth gc, or ${deps.provider.finalStates?.retentionDays ?? 0} days of retention)`;

/** The batch's store and the attempt's key in it, when the batch names one and the attempt's files reached it. */
function storedAttempt(input: RegradeInput): { url: string; key: string } | null {
  const url = input.episode.episodeSettings.resultsStore;
  return url && input.from.storeKey ? { url, key: input.from.storeKey } : null;
}

/** Why the attempt's agent turn is neither on this host nor whole in the results store, or null. */
async function missingLogs(deps: HostServices, input: RegradeInput): Promise<string | null> {
  const source = turnLogsDir(input.from.logsDir, 0, null);
  if (existsSync(join(source, 'agent', 'trajectory.json'))) return null;
  const stored = storedAttempt(input);
  if (!stored) {
    return `${source}/agent/trajectory.json is not on this host: the episode ${input.from.workflowId} has no agent turn to regrade (its seed failed, or its logs were removed)`;
  }
  const notHere = `${source}/agent/trajectory.json is not on ${deps.identity.host}`;
  const { store, credentials } = hostStore(stored.url);
  let manifest;
  try {
    manifest = await readManifest(store, stored.key);
  } catch (err) {
    const e = err as Error;
    return withoutSecrets(`${notHere}, and the results store ${stored.url} could not be read from it: ${e.name}: ${e.message} (docs/deployment.md, A results store)`,
      [credentials?.secretAccessKey, credentials?.accessKeyId, credentials?.sessionToken]);
  }
  if (!manifest) return `${notHere}, and the results store has no whole copy of it (no manifest at ${stored.url}: ${stored.key})`;
  if (!manifest.files.some((f) => f.path === `${SOURCE_TURN}/agent/trajectory.json`)) {
    return `${notHere}, nor in the results store (${stored.key}): the episode ${input.from.workflowId} has no agent turn to regrade`;
  }
  return null;
}

/**
 * Where a file of the attempt's manifest (a path in its logs folder) goes in the regrade's turn folder: the single
 * turn's `parts` (agent, artifacts) only, at the same place under the turn; null for anything else.
 */
export function regradeCopyPath(path: string, parts: string[]): string | null {
  const part = parts.find((p) => path.startsWith(`${SOURCE_TURN}/${p}/`));
  return part ? path.slice(SOURCE_TURN.length + 1) : null;
}

/**
 * Puts the attempt's agent/ (and, for separate mode, the artifacts/ its verification collected) into the regrade's turn
 * folder: copied from this host's disk, or read from the results store, each file checked against the manifest.
 */
async function bringAttemptFiles(input: RegradeInput, turnDir: string, parts: string[]): Promise<void> {
  const source = turnLogsDir(input.from.logsDir, 0, null);
  const stored = storedAttempt(input);
  if (existsSync(join(source, 'agent', 'trajectory.json')) || !stored) {
    for (const part of parts) if (existsSync(join(source, part))) await cp(join(source, part), join(turnDir, part), { recursive: true });
    return;
  }
  const got = await downloadAttempt(hostStore(stored.url).store, stored.key, turnDir, (path) => regradeCopyPath(path, parts));
  if (!got) throw refused(`the results store has no whole copy of ${input.from.workflowId} (no manifest at ${stored.url}: ${stored.key})`);
}

/** Why this host cannot regrade the episode (its agent's logs gone; for shared mode, no kept final state), or null. */
export async function regradeRefusal(deps: HostServices, req: { input: RegradeInput; plan: EpisodePlan }): Promise<string | null> {
  const { input, plan } = req;
  const missing = await missingLogs(deps, input);
  if (missing) return missing;
  if (plan.verifierMode !== 'separate' && (await deps.provider.images.labels(finalStateImage(input.stateOf.workflowId, input.stateOf.runId))) === null) return noKeptState(deps, input);
  return null;
}

/** The regrade's turn, where its logs folder is, and (a cluster's shared sandbox queue) the queue that serves it. */
export async function regradeTurn(deps: HostServices, req: { input: RegradeInput; plan: EpisodePlan }): Promise<TurnOutcome & { logsDir: string; filesQueue?: string }> {
  return typed(() => beating(async () => {
    const { input, plan } = req;
    const exec = Context.current().info.workflowExecution;
    if (!exec) throw new Error('regradeTurn runs only inside a regrade workflow');
    const { workflowId, runId } = exec;
    const task = await deps.loadEpisodeTask({ ...input.episode, digest: plan.digest });
    const refusal = await regradeRefusal(deps, req);
    if (refusal) throw refused(refusal);
    const logsDir = episodeLogsDir(workflowId, runId);
    const turnDir = turnLogsDir(logsDir, 0, null);
    await rm(turnDir, { recursive: true, force: true });
    await mkdir(turnDir, { recursive: true });
    // The regrade's own logs folder holds what the agent did (for the viewer) and what the new verifier said.
    await bringAttemptFiles(input, turnDir, plan.verifierMode === 'separate' ? ['agent', 'artifacts'] : ['agent']);
    const trajectory = JSON.parse(await readFile(join(turnDir, 'agent', 'trajectory.json'), 'utf8')) as AtifTrajectory;
    const responseText = existsSync(join(turnDir, 'agent', 'response.txt')) ? await readFile(join(turnDir, 'agent', 'response.txt'), 'utf8') : input.from.responseText;
    const secrets = loadBerthConfig().config.secrets;
    const base = {
      provider: deps.provider, task, stepIndex: null, logsDir: turnDir, trajectory, responseText,
      naming: { workflowId, runId, batchId: input.episode.batchId }, hostEnv: process.env, secrets, imageAliases: input.episode.imageAliases,
      heartbeat: () => heartbeat(), signal: Context.current().cancellationSignal,
    };
    const out = await withSlot(deps, workflowId, runId, () => (plan.verifierMode === 'separate'
      ? regradeSeparate(base, input)
      : regradeShared(deps, base, task, input, workflowId, runId)));
    const { verify: _old, ...agentTimings } = input.from.timings;
    return { ...turnOutcomeOf(out, { step: plan.steps[0]!.name, responseText, agentTimings, usage: input.from.usage, hidden: hiddenValuesOf(task, secrets) }), logsDir,
      ...(deps.identity.filesQueue ? { filesQueue: deps.identity.filesQueue } : {}) };
  }));
}

type Base = Omit<VerifyContext, 'agent'>;

/** Verification in a fresh verifier, from the artifacts the first verification collected (already in the turn folder). */
async function regradeSeparate(base: Base, input: RegradeInput): Promise<VerifyResult> {
  const collected = await copiedFromManifest(join(base.logsDir, 'artifacts'));
  // The agent's sandbox is long gone: it is only named, never reached. Its working directory is a Python verifier's
  // `workspace`: [environment].workdir when the task sets one (the image's WORKDIR is not on record here).
  const gone: SandboxHandle = { name: containerName(input.from.workflowId, input.from.runId, 'agent'), containerId: '', user: 'root', workdir: base.task.environment.workdir ?? '/' };
  return runVerification({ ...base, agent: gone, collected });
}

async function regradeShared(deps: HostServices, base: Base, task: Task, input: RegradeInput, workflowId: string, runId: string): Promise<VerifyResult> {
  const { provider } = deps;
  const image = finalStateImage(input.stateOf.workflowId, input.stateOf.runId);
  const labels = await provider.images.labels(image);
  if (labels === null) throw refused(noKeptState(deps, input));
  const spec = agentSandboxSpec(task, { ref: image, name: image, config: null, built: false }, {
    name: containerName(workflowId, runId, 'agent'), taskEnv: environmentOf(task, process.env),
    labels: { batch: input.episode.batchId, workflowId, role: 'agent' },
    network: await agentSandboxNetwork(deps, task, undefined),
  });
  // The state already has the overlay's and the agent's work; the user and folder the episode resolved are on its labels.
  delete spec.overlay;
  delete spec.entrypoint;
  delete spec.healthchecks;
  if (labels[LABEL_USER]) spec.user = labels[LABEL_USER];
  if (labels[LABEL_WORKDIR]) spec.workdir = labels[LABEL_WORKDIR];
  try {
    const { handle } = await provider.seed(spec);
    return await runVerification({ ...base, agent: handle });
  } finally {
    await provider.teardown(spec.name).catch(() => undefined);
  }
}
