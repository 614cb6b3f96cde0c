import type Docker from 'dockerode';
import { ENGINE, SandboxLost } from '../errors.ts';
import { asSandboxError } from './loss.ts';
import { answeredWithin, ENGINE_ANSWER_SEC } from './engine-deadline.ts';
import { LABEL_POOL, LABEL_POOL_OWNER, POOL_NAME_PREFIX } from '../names.ts';
import type { JanitorOptions, JanitorReport, SandboxHandle, SandboxInfo } from '../types.ts';

export async function inspectSandbox(docker: Docker, handle: SandboxHandle): Promise<SandboxInfo> {
  let info: Docker.ContainerInspectInfo;
  try {
    info = await docker.getContainer(handle.containerId).inspect();
  } catch (err) {
    const e = err as { statusCode?: number };
    throw e.statusCode === 404 ? new SandboxLost(handle.name, err) : asSandboxError(handle.name, err);
  }
  return {
    name: info.Name.replace(/^\//, ''),
    containerId: info.Id,
    running: info.State.Running,
    status: info.State.Status,
    exitCode: info.State.Running ? null : info.State.ExitCode,
    oomKilled: info.State.OOMKilled,
    labels: info.Config.Labels ?? {},
    image: info.Image,
  };
}

/** Removes the container and its anonymous volumes; a container already gone is fine. An engine silent for `answerSec` loses it. */
export async function teardownSandbox(docker: Docker, nameOrHandle: string | SandboxHandle, answerSec = ENGINE_ANSWER_SEC): Promise<{ removed: boolean }> {
  const ref = typeof nameOrHandle === 'string' ? nameOrHandle : nameOrHandle.containerId;
  const name = typeof nameOrHandle === 'string' ? nameOrHandle : nameOrHandle.name;
  try {
    // dockerode takes a signal on remove; its types leave it out.
    await answeredWithin(`the removal of ${name}`, answerSec, (abortSignal) => docker.getContainer(ref).remove({ force: true, v: true, abortSignal } as Docker.ContainerRemoveOptions));
    return { removed: true };
  } catch (err) {
    const e = err as { statusCode?: number; message?: string };
    if (e.statusCode === 404) return { removed: false };
    if (e.statusCode === 409 && /already in progress/i.test(e.message ?? '')) return { removed: false };
    throw asSandboxError(name, err);
  }
}

/** Stops a sandbox's processes, keeping the container (teardown removes it). Already stopped or gone is fine. */
export async function stopSandbox(docker: Docker, handle: SandboxHandle): Promise<void> {
  try {
    await docker.getContainer(handle.containerId).stop({ t: 2 });
  } catch (err) {
    const code = (err as { statusCode?: number }).statusCode;
    if (code === 304 || code === 404) return;
    throw asSandboxError(handle.name, err);
  }
}

/** Starts a stopped sandbox again (its keep-alive and setup run once more); a running one is left alone. */
export async function resumeSandbox(docker: Docker, handle: SandboxHandle): Promise<void> {
  try {
    await docker.getContainer(handle.containerId).start();
  } catch (err) {
    if ((err as { statusCode?: number }).statusCode === 304) return;
    throw asSandboxError(handle.name, err);
  }
}

/** Gives a running sandbox another name (a warm pool's claim); the container, its processes and files stay as they are. */
export async function renameSandbox(docker: Docker, handle: SandboxHandle, name: string, answerSec = ENGINE_ANSWER_SEC): Promise<SandboxHandle> {
  try {
    await answeredWithin(`the rename of ${handle.name}`, answerSec, (abortSignal) => docker.getContainer(handle.containerId).rename({ name, abortSignal }));
  } catch (err) {
    throw asSandboxError(handle.name, err);
  }
  return { ...handle, name };
}

/**
 * The janitor's part for warm-pool sandboxes, which carry the pool's labels instead of a workflow's (Docker cannot
 * relabel a container: docs/performance-notes.md, The warm pool). One still under its pool name goes when its owner process is gone; a
 * claimed one is judged as the episode that claimed it (found by its name in the host's slots) is.
 */
export async function janitorPool(docker: Docker, options: JanitorOptions, remove: (containerId: string) => Promise<{ removed: boolean }>, answerSec = ENGINE_ANSWER_SEC): Promise<JanitorReport> {
  const report: JanitorReport = { removed: [], kept: [] };
  const list = await answeredWithin("the list of the warm pools' sandboxes", answerSec, (abortSignal) => docker.listContainers({ all: true, filters: { label: [LABEL_POOL] }, abortSignal }))
    .catch((err: unknown) => { throw asSandboxError(ENGINE, err); });
  for (const c of list) {
    const name = (c.Names[0] ?? c.Id).replace(/^\//, '');
    const verdict = poolVerdict(options, name, c.Labels[LABEL_POOL] ?? '', c.Labels[LABEL_POOL_OWNER] ?? '');
    if ('keep' in verdict) { report.kept.push({ name, workflowId: '', reason: verdict.keep }); continue; }
    const workflowId = 'episode' in verdict ? verdict.episode : '';
    if (workflowId) {
      let live: boolean;
      try {
        live = await options.isLive(workflowId);
      } catch (err) {
        report.kept.push({ name, workflowId, reason: `could not tell whether it is live: ${(err as Error).message}` });
        continue;
      }
      if (live) { report.kept.push({ name, workflowId, reason: 'episode is running' }); continue; }
    }
    if ((await remove(c.Id)).removed) report.removed.push({ name, workflowId });
  }
  return report;
}

/** A pooled sandbox: kept, removed, or judged as the episode that claimed it is judged. */
function poolVerdict(options: JanitorOptions, name: string, queue: string, owner: string): { keep: string } | { episode: string } | { remove: true } {
  if (!options.pool) return { keep: 'a warm-pool sandbox (no pool rules given)' };
  if (name.startsWith(POOL_NAME_PREFIX)) return options.pool.ownerLive(owner) ? { keep: `warm pool of live worker ${owner}` } : { remove: true };
  const episode = options.pool.episodeOf(queue, name);
  return episode === undefined ? { remove: true } : { episode };
}
