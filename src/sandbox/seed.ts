import type Docker from 'dockerode';
import { asSandboxError, ImageMissing, SandboxLost, SeedFailed } from './errors.ts';
import { gpuDeviceRequests } from './gpus.ts';
import { readImageConfig } from './image-config.ts';
import { envList, runExec } from './exec.ts';
import { uploadPath } from './files.ts';
import {
  LABEL_BATCH,
  LABEL_ROLE,
  LABEL_USER,
  LABEL_WORKDIR,
  LABEL_WORKFLOW,
} from './names.ts';
import { waitForKeepAlive } from './keep-alive.ts';
import { pollHealthcheck, runOverlay, startEntrypoint } from './seed-phases.ts';
import { baseSetupScript, MARK_SEEDED, SEEDED_MARKER, userCheckScript, workdirSetupScript } from './seed-scripts.ts';
import type { SandboxHandle, SandboxSpec, SeedResult } from './types.ts';

export interface Resolved {
  user: string;
  workdir: string;
}

export async function resolveUserAndWorkdir(docker: Docker, spec: SandboxSpec): Promise<Resolved> {
  if (spec.user && spec.workdir) return { user: spec.user, workdir: spec.workdir };
  const config = await readImageConfig(docker, spec.image);
  if (!config) throw new SeedFailed('harbor:seed_failed', new ImageMissing(spec.image, new Error('no such image')).message);
  return {
    user: spec.user || config.user || 'root',
    workdir: spec.workdir || config.workdir || '/',
  };
}

function createOptions(spec: SandboxSpec, r: Resolved, plan: SeedPlan): Docker.ContainerCreateOptions {
  const memory = spec.memoryMb ? spec.memoryMb * 1024 * 1024 : undefined;
  return {
    name: spec.name,
    Image: spec.image,
    // Keep-alive under docker-init (Init: true reaps orphans). It first runs the root setup, so seed
    // needs no exec for it; waitForKeepAlive sees it reach `sleep infinity`.
    Entrypoint: keepAliveCommand(plan),
    Cmd: [],
    User: '0:0',
    Env: envList(spec.env),
    Labels: {
      [LABEL_BATCH]: spec.labels.batch,
      [LABEL_WORKFLOW]: spec.labels.workflowId,
      [LABEL_ROLE]: spec.labels.role,
      [LABEL_USER]: r.user,
      [LABEL_WORKDIR]: r.workdir,
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
async function tryAdopt(docker: Docker, name: string): Promise<SandboxHandle | undefined> {
  let info: Docker.ContainerInspectInfo;
  try {
    info = await docker.getContainer(name).inspect();
  } catch (err) {
    if ((err as { statusCode?: number }).statusCode === 404) return undefined;
    throw asSandboxError(name, err);
  }
  const handle = handleFromInspect(info);
  if (info.State.Running) {
    const check = await runExec(docker, handle, { argv: ['test', '-e', SEEDED_MARKER], user: 'root', workdir: '/' });
    if (check.exitCode === 0) return handle;
  }
  // Half-seeded (a crash between create and the end of seed): RUN lines are not idempotent, so start over.
  await docker
    .getContainer(info.Id)
    .remove({ force: true, v: true })
    .catch((err: unknown) => {
      if ((err as { statusCode?: number }).statusCode !== 404) throw asSandboxError(name, err);
    });
  return undefined;
}

/** What the keep-alive runs as root before `sleep infinity`, and what seed does once it runs (seedSandbox, seedGroup). */
export interface SeedPlan {
  resolved: Resolved;
  /** The keep-alive's setup script. */
  setup: string;
  overlay?: NonNullable<SandboxSpec['overlay']>;
  workdirStep: string[];
  laterSteps: boolean;
}

export function seedPlan(spec: SandboxSpec, resolved: Resolved): SeedPlan {
  const overlay = spec.overlay && spec.overlay.runs.length > 0 ? spec.overlay : undefined;
  const laterSteps = Boolean(spec.entrypoint?.command.length || spec.healthchecks?.length || spec.uploadDirs?.length);
  const workdirStep = [userCheckScript(resolved.user), workdirSetupScript(resolved.workdir, resolved.user)];
  // Without RUN lines every user already exists, so the whole setup runs in the keep-alive.
  const setup = [baseSetupScript(overlay ? [...new Set(overlay.runs.map((r) => r.workdir || '/'))] : [])];
  if (!overlay) setup.push(...workdirStep, ...(laterSteps ? [] : [MARK_SEEDED]));
  return { resolved, setup: setup.join('\n'), overlay, workdirStep, laterSteps };
}

/** The keep-alive's argv: the root setup, then `sleep infinity` (watched for by waitForKeepAlive). */
export function keepAliveCommand(plan: SeedPlan): string[] {
  return ['/bin/sh', '-c', `set -e\n${plan.setup}\nexec sleep infinity`];
}

export async function seedSandbox(docker: Docker, spec: SandboxSpec): Promise<SeedResult> {
  const plan = seedPlan(spec, await resolveUserAndWorkdir(docker, spec));
  const { resolved } = plan;

  let container: Docker.Container | undefined;
  for (let attempt = 0; !container; attempt++) {
    try {
      container = await docker.createContainer(createOptions(spec, resolved, plan));
    } catch (err) {
      const e = err as { statusCode?: number };
      if (e.statusCode === 409 && attempt === 0) {
        const adopted = await tryAdopt(docker, spec.name);
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
  const handle: SandboxHandle = { name: spec.name, containerId: container.id, ...resolved };

  try {
    await container.start();
  } catch (err) {
    throw asSandboxError(spec.name, err);
  }
  await finishSeed(docker, container, handle, spec, plan);
  return { handle, adopted: false };
}

/** Once the container exists: its keep-alive's setup, then overlay RUN lines, uploads, entrypoint, healthchecks, the seeded marker. */
export async function finishSeed(docker: Docker, container: Docker.Container, handle: SandboxHandle, spec: SandboxSpec, plan: SeedPlan): Promise<void> {
  await waitForKeepAlive(container, handle.name);
  const { overlay, workdirStep, laterSteps, resolved } = plan;
  if (overlay) {
    await runOverlay(docker, handle, overlay.runs, overlay.timeoutSec);
    // The agent user may have been created by a RUN line, so the working directory comes after.
    await setupExec(docker, handle, [...workdirStep, ...(laterSteps ? [] : [MARK_SEEDED])].join('\n'));
  }
  for (const u of spec.uploadDirs ?? []) {
    await uploadPath(docker, handle, u.hostDir, u.containerDir, { owner: resolved.user });
  }
  if (spec.entrypoint && spec.entrypoint.command.length > 0) await startEntrypoint(docker, handle, spec.entrypoint);
  for (const hc of spec.healthchecks ?? []) await pollHealthcheck(docker, handle, hc, Boolean(spec.entrypoint?.command.length));
  if (laterSteps) await setupExec(docker, handle, MARK_SEEDED);
}

async function setupExec(docker: Docker, handle: SandboxHandle, script: string): Promise<void> {
  const res = await runExec(docker, handle, {
    argv: ['/bin/sh', '-c', `set -e\n${script}`],
    user: 'root',
    workdir: '/',
    outputCapBytes: 64 * 1024,
  });
  if (res.exitCode !== 0) {
    if (res.exitCode === 137) throw new SandboxLost(handle.name, new Error('setup was killed'));
    throw new SeedFailed(
      'harbor:seed_failed',
      `preparing sandbox ${handle.name} failed (exit ${res.exitCode}): ${(res.stderr || res.stdout).trim()}`,
      res.stderr,
    );
  }
}
