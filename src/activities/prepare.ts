import { Context, heartbeat } from '@temporalio/activity';
import type { EpisodeInput, PrepareAhead, PrepareInput, PrepareRequest, PrepareOutcome } from './types.ts';
import { planEpisode } from './shared.ts';
import { SandboxLost } from '../sandbox/index.ts';
import { prepareAndRecord } from '../host/image-prep.ts';
import { buildLayerFor } from '../host/agent-layer.ts';
import { installedAgent } from '../agents/index.ts';
import type { HostServices } from '../host/deps.ts';

/** Makes one task's image ready on this host and records it; a failure is an outcome, not an error. */
export async function prepareTask(deps: HostServices, req: PrepareRequest): Promise<PrepareOutcome> {
  const timer = setInterval(() => heartbeat(), 5000);
  try {
    return await prepareOne(deps, req);
  } finally {
    clearInterval(timer);
  }
}

/**
 * Every task of a batch, one at a time (builds are CPU-heavy), on the host whose worker took the activity: one
 * activity instead of one per task. Progress goes in the heartbeat, so a retried attempt goes on from there.
 */
export async function prepareTasksHere(deps: HostServices, input: PrepareInput): Promise<PrepareOutcome[]> {
  const done = ((Context.current().info.heartbeatDetails as { outcomes?: PrepareOutcome[] } | undefined)?.outcomes ?? []).slice();
  const timer = setInterval(() => heartbeat({ outcomes: done }), 5000);
  try {
    for (const t of input.tasks.slice(done.length)) {
      done.push(await prepareOne(deps, {
        ...t, datasetPath: input.datasetPath, imageAliases: input.imageAliases,
        ...(input.separateVerifierForArtifacts ? { separateVerifierForArtifacts: true } : {}),
      }, input.agent));
      heartbeat({ outcomes: done });
    }
    if (input.ahead && deps.pool) deps.pool.serveAhead(await readyAhead(deps, input.ahead, done), Context.current().client);
    return done;
  } finally {
    clearInterval(timer);
  }
}

async function prepareOne(deps: HostServices, req: PrepareRequest, agent?: string): Promise<PrepareOutcome> {
  try {
    const task = await deps.loadEpisodeTask({ ...req, batchId: '', datasetName: '', repeat: 1, attempt: 1, agent: 'oracle', agentArgs: {},
      episodeSettings: { defaultTimeoutSec: 0, enforceTaskTimeouts: true, sandboxReadyTimeoutSec: 0, separateVerifierForArtifacts: req.separateVerifierForArtifacts === true } });
    // The agent's image and a separate verifier's, made ready and recorded: what this task's episodes start from here.
    const { agent: image } = await prepareAndRecord(deps.provider, task, req.imageAliases);
    // berth prepare --agent: the agent's layer over the task's image, so no episode waits for the install.
    const layer = agent && installedAgent(agent) ? await buildLayerFor(deps.provider, image.ref, agent) : undefined;
    const pinned = (task.image.mode === 'pull' || task.image.mode === 'overlay') && image.config ? { baseImageId: image.config.id } : {};
    return { taskId: task.id, ok: true, image: image.name, mode: task.image.mode, built: image.built, ...(layer ? { layer: { tag: layer.tag, built: layer.built } } : {}), ...pinned };
  } catch (err) {
    // An engine that stopped answering is retried; anything else is this task's outcome.
    if (err instanceof SandboxLost) throw err;
    return { taskId: req.taskId, ok: false, reason: (err as Error).message };
  }
}

/**
 * The batch's first episodes as they will start: tasks whose image failed left out, base images pinned as prepared,
 * and tasks their episode's plan would refuse (planEpisode: an unset variable, a capability) left out too, so no
 * sandbox is ever made for an episode that must fail before any sandbox starts.
 */
async function readyAhead(deps: HostServices, ahead: PrepareAhead, outcomes: readonly PrepareOutcome[]): Promise<PrepareAhead> {
  const pins = new Map(outcomes.flatMap((o) => (o.ok ? [[o.taskId, o.baseImageId] as const] : [])));
  const wanted = new Set(ahead.episodes.map((e) => e.taskId));
  const upcoming: PrepareAhead['upcoming'] = [];
  const { baseImageId: _unpinned, ...first } = ahead.first;
  for (const u of ahead.upcoming.filter((v) => pins.has(v.taskId) && wanted.has(v.taskId))) {
    const pin = pins.get(u.taskId);
    const task = { taskId: u.taskId, taskPath: u.taskPath, digest: u.digest, ...(pin !== undefined ? { baseImageId: pin } : {}) };
    if (await plans(deps, { ...first, ...task })) upcoming.push({ ...task, remaining: u.remaining });
  }
  const ready = new Set(upcoming.map((u) => u.taskId));
  return { first: ahead.first, upcoming, episodes: ahead.episodes.filter((e) => ready.has(e.taskId)) };
}

async function plans(deps: HostServices, input: EpisodeInput): Promise<boolean> {
  return planEpisode(deps, input).then(() => true, () => false);
}
