import { ensureServer, type ServerInfo } from '../server/devserver.ts';
import { dockerAnswers, dockerEndpoint } from '../server/docker-check.ts';
import { ensureWorker, workerPolls } from '../server/worker-daemon.ts';
import { UserError } from './output.ts';
import { sharedQueue } from '../config/index.ts';

/**
 * With no TEMPORAL_ADDRESS: start (or reuse) the embedded server and the detached worker.
 * With one: be a client, and refuse when no worker polls the queue.
 */
export async function ensureCluster(queue = sharedQueue()): Promise<ServerInfo> {
  const server = await ensureServer();
  if (server.embedded) {
    if (!(await dockerAnswers())) {
      throw new UserError(`No Docker engine answers at ${dockerEndpoint().label}. Start one with: npm run setup (it installs and starts dockerd), or set DOCKER_HOST.`);
    }
    await ensureWorker(server.address);
  }
  // BERTH_TASK_QUEUE: the shared queue of a cluster's own workers (tests, multi-tenant clusters), as for `berth worker`;
  // `--sandbox` another sandbox's, which the detached worker (berth.toml's sandbox) may not poll.
  if (!(await workerPolls(server.address, undefined, queue))) {
    const sandbox = queue === sharedQueue() ? '' : ` --sandbox ${queue.slice(sharedQueue().length + 1)}`;
    throw new UserError(`No Berth worker polls task queue "${queue}" on ${server.address}. Start one with: npx berth worker${sandbox}`);
  }
  return server;
}
