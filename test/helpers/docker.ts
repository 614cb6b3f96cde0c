import { spawnSync } from 'node:child_process';
import Docker from 'dockerode';
import { DockerDriver } from '../../src/sandbox/docker/driver.ts';
import { waitUntil } from './worker-process.ts';

/**
 * Waits (bounded) until no container, running or not, has this label (`berth.workflow=<id>`): a
 * worker removes an episode's sandboxes in the background after its teardown returns.
 */
export async function noContainersLeft(label: string, timeoutMs = 15_000): Promise<void> {
  const docker = new Docker();
  let left: string[] = [];
  await waitUntil(async () => {
    left = (await docker.listContainers({ all: true, filters: { label: [label] } })).map((c) => c.Names[0] ?? c.Id);
    return left.length === 0;
  }, timeoutMs, `no container labelled ${label}`).catch((err: Error) => {
    throw new Error(`${err.message}; still there: ${left.join(', ')}`);
  });
}

/**
 * Waits (bounded) until the episode's sandbox holds `path` (a file its agent writes when it has started), and
 * returns that container's id. In a Compose group, `service` names the service to look in. The file is looked for
 * through the engine's archive API (a stat of the container's filesystem), not a docker exec: a probe that starts
 * no process in the sandbox has nothing to wait for on a busy engine. A timeout says what the last look saw.
 */
export async function waitForFileInEpisode(workflowId: string, path: string, timeoutMs: number, what: string, service?: string): Promise<string> {
  const docker = new Docker();
  let containerId = '';
  let seen = 'no look finished';
  const label = [`berth.workflow=${workflowId}`, ...(service ? [`com.docker.compose.service=${service}`] : [])];
  await waitUntil(async () => {
    const [c] = await docker.listContainers({ filters: { label } });
    if (!c) { seen = `no running container labelled ${label.join(', ')}`; return false; }
    containerId = c.Id;
    const found = await fileInContainer(docker, c.Id, path);
    seen = `${c.Names[0] ?? c.Id} is ${c.State}; ${path}: ${found}`;
    return found === 'present';
  }, timeoutMs, what).catch((err: Error) => {
    throw new Error(`${err.message} (last look: ${seen})`);
  });
  return containerId;
}

/** Whether `path` is in the container's filesystem: the driver's own archive stat (DockerDriver.pathKind). */
async function fileInContainer(docker: Docker, containerId: string, path: string): Promise<string> {
  const handle = { name: containerId, containerId, user: 'root', workdir: '/' };
  return new DockerDriver({ docker }).pathKind(handle, path).then((kind) => (kind === null ? 'absent' : 'present'), (err: Error) => `error ${err.message}`);
}

/** Whether `cmd` exits 0 in the container (false if it has not ended within 2.5 s). */
export async function execSucceeds(docker: Docker, containerId: string, cmd: string[]): Promise<boolean> {
  const ex = await docker.getContainer(containerId).exec({ Cmd: cmd });
  await ex.start({ Detach: true });
  // A loaded machine can take longer than a fixed pause to run an exec: wait (bounded) for this one to end.
  for (let i = 0; i < 50; i++) {
    const state = await ex.inspect();
    if (!state.Running) return state.ExitCode === 0;
    await new Promise((r) => setTimeout(r, 50));
  }
  return false;
}

/** Builds a test's own image from a Dockerfile on stdin (no context). */
export function buildTestImage(tag: string, dockerfile: string): void {
  const r = spawnSync('docker', ['build', '-q', '-t', tag, '-'], { input: dockerfile, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(r.stderr);
}

/** Removes a test's own image, and the tag an agent layer build gave its id (`berth-agent-base:<id>`) if it got that far. */
export function removeTestImage(tag: string): void {
  const id = spawnSync('docker', ['image', 'inspect', '-f', '{{.Id}}', tag], { encoding: 'utf8' }).stdout.trim().replace(/^sha256:/, '');
  spawnSync('docker', ['rmi', tag, ...(id ? [`berth-agent-base:${id.slice(0, 20)}`] : [])]);
}

/** The base image without libstdc++ (a JavaScript agent's Node.js cannot run on it). */
export const NO_LIBSTDCXX = 'FROM berth-base:bookworm\nRUN rm -f /usr/lib/x86_64-linux-gnu/libstdc++.so.6*\n';
