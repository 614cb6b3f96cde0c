// The regrade's one host activity: verification run again for a finished episode, without its agent. Separate mode
// restores the artifacts the first verification collected into a fresh verifier; shared mode starts a sandbox from the
// final state kept by --keep-final-state. Either way the task's tests/ are read afresh.
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

const noKeptState = (deps: HostServices, input: RegradeInput): string =>
  `no final state of ${input.stateOf.workflowId} is kept on this host (image ${finalStateImage(input.stateOf.workflowId, input.stateOf.runId)}): a shared-mode regrade needs the batch run with --keep-final-state, and the image not yet removed (berth gc, or ${deps.provider.finalStates?.retentionDays ?? 0} days of retention)`;

/** Why this host cannot regrade the episode (its agent's logs gone; for shared mode, no kept final state), or null. */
export async function regradeRefusal(deps: HostServices, req: { input: RegradeInput; plan: EpisodePlan }): Promise<string | null> {
  const { input, plan } = req;
  const source = turnLogsDir(input.from.logsDir, 0, null);
  if (!existsSync(join(source, 'agent', 'trajectory.json'))) {
    return `${source}/agent/trajectory.json is not on this host: the episode ${input.from.workflowId} has no agent turn to regrade (its seed failed, or its logs were removed)`;
  }
  if (plan.verifierMode !== 'separate' && (await deps.provider.images.labels(finalStateImage(input.stateOf.workflowId, input.stateOf.runId))) === null) return noKeptState(deps, input);
  return null;
}

export async function regradeTurn(deps: HostServices, req: { input: RegradeInput; plan: EpisodePlan }): Promise<TurnOutcome & { logsDir: string }> {
  return typed(() => beating(async () => {
    const { input, plan } = req;
    const exec = Context.current().info.workflowExecution;
    if (!exec) throw new Error('regradeTurn runs only inside a regrade workflow');
    const { workflowId, runId } = exec;
    const task = await deps.loadEpisodeTask({ ...input.episode, digest: plan.digest });
    const source = turnLogsDir(input.from.logsDir, 0, null);
    const refusal = await regradeRefusal(deps, req);
    if (refusal) throw refused(refusal);
    const logsDir = episodeLogsDir(workflowId, runId);
    const turnDir = turnLogsDir(logsDir, 0, null);
    await rm(turnDir, { recursive: true, force: true });
    await mkdir(turnDir, { recursive: true });
    // The regrade's own logs folder holds what the agent did (for the viewer) and what the new verifier said.
    await cp(join(source, 'agent'), join(turnDir, 'agent'), { recursive: true });
    const trajectory = JSON.parse(await readFile(join(turnDir, 'agent', 'trajectory.json'), 'utf8')) as AtifTrajectory;
    const responseText = existsSync(join(turnDir, 'agent', 'response.txt')) ? await readFile(join(turnDir, 'agent', 'response.txt'), 'utf8') : input.from.responseText;
    const secrets = loadBerthConfig().config.secrets;
    const base = {
      provider: deps.provider, task, stepIndex: null, logsDir: turnDir, trajectory, responseText,
      naming: { workflowId, runId, batchId: input.episode.batchId }, hostEnv: process.env, secrets, imageAliases: input.episode.imageAliases,
      heartbeat: () => heartbeat(), signal: Context.current().cancellationSignal,
    };
    const out = await withSlot(deps, workflowId, runId, () => (plan.verifierMode === 'separate'
      ? regradeSeparate(base, source, input)
      : regradeShared(deps, base, task, input, workflowId, runId)));
    const { verify: _old, ...agentTimings } = input.from.timings;
    return { ...turnOutcomeOf(out, { step: plan.steps[0]!.name, responseText, agentTimings, usage: input.from.usage, hidden: hiddenValuesOf(task, secrets) }), logsDir };
  }));
}

type Base = Omit<VerifyContext, 'agent'>;

async function regradeSeparate(base: Base, source: string, input: RegradeInput): Promise<VerifyResult> {
  const artifacts = join(base.logsDir, 'artifacts');
  if (existsSync(join(source, 'artifacts'))) await cp(join(source, 'artifacts'), artifacts, { recursive: true });
  const collected = await copiedFromManifest(artifacts);
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
