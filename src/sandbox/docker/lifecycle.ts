import type Docker from 'dockerode';
import { asSandboxError, SandboxLost } from '../errors.ts';
import type { SandboxHandle, SandboxInfo } from '../types.ts';

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

/** Removes the container and its anonymous volumes; a container already gone is fine. */
export async function teardownSandbox(docker: Docker, nameOrHandle: string | SandboxHandle): Promise<{ removed: boolean }> {
  const ref = typeof nameOrHandle === 'string' ? nameOrHandle : nameOrHandle.containerId;
  const name = typeof nameOrHandle === 'string' ? nameOrHandle : nameOrHandle.name;
  try {
    await docker.getContainer(ref).remove({ force: true, v: true });
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
