// Whether the engine can give containers GPUs, asked of the engine itself once (gpus.ts holds the device requests).
import type Docker from 'dockerode';
import { randomBytes } from 'node:crypto';
import { describeCause, ENGINE } from '../errors.ts';
import { asSandboxError } from './loss.ts';
import { gpuDeviceRequests } from '../gpus.ts';
import { LABEL_ROLE, LABEL_WORKFLOW } from '../names.ts';
import type { GpuSupport } from '../types.ts';

/** What the engine says when no device driver can give GPUs (no NVIDIA container toolkit). */
const NO_GPU_DRIVER = /could not select device driver|no gpu|nvidia-container|unknown or invalid runtime/i;

const probes = new WeakMap<Docker, Promise<GpuSupport>>();

/**
 * Asks the engine itself: a container given one GPU is started once (image `probeImage`, which must be present).
 * The answer is kept for the engine.
 */
export function gpuSupport(docker: Docker, probeImage: string): Promise<GpuSupport> {
  let probe = probes.get(docker);
  if (!probe) {
    probe = probeGpus(docker, probeImage);
    probes.set(docker, probe);
    probe.catch(() => probes.delete(docker));
  }
  return probe;
}

async function probeGpus(docker: Docker, image: string): Promise<GpuSupport> {
  let container: Docker.Container;
  try {
    container = await docker.createContainer({
      name: `berth-gpu-probe-${randomBytes(4).toString('hex')}`,
      Image: image,
      Entrypoint: ['/bin/sh', '-c', 'true'],
      Cmd: [],
      Labels: { [LABEL_WORKFLOW]: 'berth-gpu-probe', [LABEL_ROLE]: 'agent' },
      HostConfig: { NetworkMode: 'none', DeviceRequests: gpuDeviceRequests(1) },
    });
  } catch (err) {
    throw asSandboxError(ENGINE, err);
  }
  try {
    await container.start();
    return { ok: true };
  } catch (err) {
    const why = describeCause(err);
    if (NO_GPU_DRIVER.test(why)) return { ok: false, reason: `this Docker engine cannot give containers GPUs (${why.replace(/^\(HTTP code \d+\) [^-]+- /, '')})` };
    throw asSandboxError(ENGINE, err);
  } finally {
    await container.remove({ force: true }).catch(() => undefined);
  }
}
