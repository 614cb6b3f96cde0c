import Docker from 'dockerode';
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
