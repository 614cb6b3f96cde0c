import type { Command } from 'commander';
import { dirname, resolve } from 'node:path';
import { connect } from '../client/connect.ts';
import { configFilePath, loadBerthConfig } from '../config/berth-config.ts';
import { sharedQueue, taskQueueOverride } from '../config/index.ts';
import { startServe } from '../serve/server.ts';
import { ensureCluster } from './ensure.ts';

export function registerServe(program: Command): void {
  program.command('serve').description('serve rollouts to a trainer: Berth\'s rollout API (/runs) and NeMo Gym\'s agent server (/run); docs/training.md')
    .option('--host <host>', 'address to listen on (else berth.toml [serve] host, default 127.0.0.1)')
    .option('--port <port>', 'port to listen on (else [serve] port, default 8642)', (v) => Number(v))
    .option('--dataset <path>', 'the dataset runs and /run use (else [serve] dataset)')
    .option('--agent <name>', 'the agent /run uses and runs default to (else [serve] agent)')
    .action(async (o: { host?: string; port?: number; dataset?: string; agent?: string }) => {
      const file = configFilePath();
      const { config } = loadBerthConfig(file);
      const s = config.serve;
      const queue = taskQueueOverride() ?? sharedQueue();
      await ensureCluster(queue);
      const { client } = await connect();
      // A dataset named in berth.toml is relative to that file.
      const dataset = o.dataset ? resolve(o.dataset) : s.dataset ? resolve(file ? dirname(file) : '.', s.dataset) : undefined;
      const serving = await startServe({
        client, host: o.host ?? s.host, port: o.port ?? s.port, taskQueue: queue, ...(file ? { configFile: file } : {}),
        ...(dataset ? { dataset } : {}), ...(o.agent ?? s.agent ? { agent: o.agent ?? s.agent } : {}),
        ...(s.policy_endpoint && s.policy_model ? { policy: { endpoint: s.policy_endpoint, model: s.policy_model } } : {}),
        gymBatch: s.gym_batch, logger: console,
      });
      console.log(`berth serve: listening on ${serving.url} (dataset ${dataset ?? 'none: set [serve] dataset'}, agent ${o.agent ?? s.agent ?? 'none'})`);
      await new Promise<void>((done) => {
        const stop = () => { void serving.close().then(done); };
        process.once('SIGINT', stop);
        process.once('SIGTERM', stop);
      });
    });
}
