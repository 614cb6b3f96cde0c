// A single sandbox on Docker: one container, created with Berth's labels and its keep-alive, or adopted when a
// container of that name already finished its seed (the seeded marker, read on exec like every driver reads it).
import type Docker from 'dockerode';
import type { ExecPort, SingleSandboxSpec } from '../driver.ts';
import { ImageMissing, SeedFailed } from '../errors.ts';
import { asSandboxError } from './loss.ts';
import { envList } from '../exec.ts';
import { gpuDeviceRequests } from '../gpus.ts';
import { LABEL_BATCH, LABEL_POOL, LABEL_POOL_KEY, LABEL_POOL_OWNER, LABEL_ROLE, LABEL_USER, LABEL_WORKDIR, LABEL_WORKFLOW } from '../names.ts';
import { isSeeded } from '../seed-scripts.ts';
import type { SandboxHandle } from '../types.ts';
import { answeredWithin, ENGINE_ANSWER_SEC, settledWithin } from './engine-deadline.ts';
import { withExecChannel } from './exec-channel.ts';
import { waitForReady } from './keep-alive.ts';
import { KeepAliveStream } from './keep-alive-stream.ts';

function createOptions(spec: SingleSandboxSpec): Docker.ContainerCreateOptions {
  const memory = spec.memoryMb ? spec.memoryMb * 1024 * 1024 : undefined;
  const keepAlive = withExecChannel(spec.keepAlive);
  // The loop reads requests on stdin (exec-channel.ts); kept open across attaches.
  const channel = keepAlive !== spec.keepAlive;
  return {
    name: spec.name,
    Image: spec.image,
    // Keep-alive under docker-init (Init: true reaps orphans). It first runs the root setup, so seed
    // needs no exec for it; waitForReady sees it reach `sleep infinity` or its request loop.
    Entrypoint: [...keepAlive],
    ...(channel ? { OpenStdin: true, StdinOnce: false } : {}),
    Cmd: [],
    User: '0:0',
    Env: envList(spec.env),
    Labels: {
      [LABEL_BATCH]: spec.labels.batch,
      // A pooled sandbox seeded for one known episode (at prepare) carries its workflow label as well.
      ...(spec.labels.workflowId !== '' || !spec.labels.pool ? { [LABEL_WORKFLOW]: spec.labels.workflowId } : {}),
      ...(spec.labels.pool ? { [LABEL_POOL]: spec.labels.pool.queue, [LABEL_POOL_OWNER]: spec.labels.pool.owner, [LABEL_POOL_KEY]: spec.labels.pool.key } : {}),
      [LABEL_ROLE]: spec.labels.role,
      [LABEL_USER]: spec.user,
      [LABEL_WORKDIR]: spec.workdir,
    },
    Healthcheck: { Test: ['NONE'] },
    HostConfig: {
      Init: true,
      NanoCpus: spec.cpus ? Math.round(spec.cpus * 1e9) : undefined,
      DeviceRequests: gpuDeviceRequests(spec.gpus),
      Memory: memory,
      MemorySwap: memory,
      NetworkMode: spec.network,
    },
  };
}

export function handleFromInspect(info: Docker.ContainerInspectInfo): SandboxHandle {
  const labels = info.Config.Labels ?? {};
  return {
    name: info.Name.replace(/^\//, ''),
    containerId: info.Id,
    user: labels[LABEL_USER] ?? 'root',
    workdir: labels[LABEL_WORKDIR] ?? '/',
  };
}

/** An existing container is adopted when it is running and finished its seed; otherwise it is replaced. */
async function tryAdopt(docker: Docker, markers: ExecPort, name: string): Promise<SandboxHandle | undefined> {
  let info: Docker.ContainerInspectInfo;
  try {
    info = await docker.getContainer(name).inspect();
  } catch (err) {
    if ((err as { statusCode?: number }).statusCode === 404) return undefined;
    throw asSandboxError(name, err);
  }
  const handle = handleFromInspect(info);
  if (info.State.Running && (await isSeeded(markers, handle))) return handle;
  // Half-seeded (a crash between create and the end of seed): RUN lines are not idempotent, so start over.
  await docker
    .getContainer(info.Id)
    .remove({ force: true, v: true })
    .catch((err: unknown) => {
      if ((err as { statusCode?: number }).statusCode !== 404) throw asSandboxError(name, err);
    });
  return undefined;
}

/**
 * The container made, started and its keep-alive's setup done; or the seeded one of that name adopted. An engine that
 * does not answer the create, attach or start within `answerSec` loses the sandbox (engine-deadline.ts).
 */
export async function createOrAdoptSingle(docker: Docker, markers: ExecPort, spec: SingleSandboxSpec, answerSec = ENGINE_ANSWER_SEC): Promise<{ handle: SandboxHandle; adopted: boolean; channel?: KeepAliveStream }> {
  const options = createOptions(spec);
  let container: Docker.Container | undefined;
  for (let attempt = 0; !container; attempt++) {
    try {
      container = await answeredWithin(`the create of ${spec.name}`, answerSec, (abortSignal) => docker.createContainer({ ...options, abortSignal }));
    } catch (err) {
      const e = err as { statusCode?: number };
      if (e.statusCode === 409 && attempt === 0) {
        const adopted = await tryAdopt(docker, markers, spec.name);
        if (adopted) return { handle: adopted, adopted: true };
        continue; // tryAdopt removed a half-seeded container: create a fresh one
      }
      if (e.statusCode === 409) {
        throw new SeedFailed('harbor:seed_failed', `container ${spec.name} is being created by another attempt; retry`);
      }
      if (e.statusCode === 404) throw new SeedFailed('harbor:seed_failed', new ImageMissing(spec.image, err).message);
      throw asSandboxError(spec.name, err);
    }
  }
  const handle: SandboxHandle = { name: spec.name, containerId: container.id, user: spec.user, workdir: spec.workdir };
  // Attached before it starts (one call for the ready line and, when it serves requests, the channel); unattachable,
  // the `top` poll sees it.
  const attach = KeepAliveStream.attach(container, { stdin: options.OpenStdin === true, logs: false });
  const attached = await settledWithin(`the attach to ${spec.name}`, answerSec, attach, (late) => late.close()).catch(() => undefined);
  try {
    await answeredWithin(`the start of ${spec.name}`, answerSec, (abortSignal) => container.start({ abortSignal })).catch((err: unknown) => { throw asSandboxError(spec.name, err); });
    const { channel } = await waitForReady(attached, container, handle.name);
    if (channel && attached) return { handle, adopted: false, channel: attached };
  } catch (err) {
    attached?.close();
    throw err;
  }
  attached?.close();
  return { handle, adopted: false };
}
