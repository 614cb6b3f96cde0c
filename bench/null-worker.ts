// A Berth worker whose sandbox is the null sandbox (bench/null-sandbox.ts), run as its own process by
// `npm run bench -- scale` so its CPU is its own: `node --import tsx bench/null-worker.ts <address> <queue> <engine id>`.
// Slots come from BERTH_WORKER_SLOTS as for any worker. On SIGTERM it drains, then prints what its driver was asked.
import { createHostServices, releaseHostServices } from '../src/host/deps.ts';
import { createWorkers } from '../src/worker.ts';
import { NullSandboxProvider } from './null-sandbox.ts';

const [address = '127.0.0.1:7233', queue = 'bench-null', engineId = 'null-0'] = process.argv.slice(2);
const provider = new NullSandboxProvider(engineId);
const deps = await createHostServices({ provider, hostQueueSuffix: queue, warmPool: false, warn: (m) => console.warn(`null worker: ${m}`) });
const { workers, connection, sharedQueue } = await createWorkers({ address, taskQueue: queue, hostQueueSuffix: queue }, deps);
console.log(`null worker ${engineId}: shared queue ${sharedQueue}, ${deps.slots.capacity} slots`);
try {
  await Promise.all(workers.map((w) => w.run()));
} finally {
  await releaseHostServices(deps);
  await connection.close();
}
console.log(`null worker ${engineId}: calls ${JSON.stringify(provider.driver.calls)}; sandboxes left ${provider.driver.held}`);
process.exit(0);
