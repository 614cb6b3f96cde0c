// `berth serve`: an HTTP server and a Temporal client, like the CLI. It keeps nothing of its own: runs, groups, the
// delivery cursor and the policy live in each run's workflow, so a killed serve loses nothing and replicas agree.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Client } from '@temporalio/client';
import { handleRuns } from './runs-api.ts';
import { handleGym, type GymContext } from './gym-run.ts';
import { sendJson } from './http.ts';
import { loadBerthConfig } from '../config/berth-config.ts';
import { openStore, type ResultsStore } from '../client/episode-tokens.ts';

export interface ServeOptions {
  client: Client;
  host?: string;
  port?: number;
  taskQueue?: string;
  configFile?: string;
  dataset?: string;
  agent?: string;
  policy?: { endpoint: string; model: string };
  gymBatch?: string;
  /**
   * Where an episode's token files are read from when its logs folder is not on this machine (docs/deployment.md, A
   * results store): default the store berth.toml names, if any; null for none.
   */
  store?: ResultsStore | null;
  logger?: { error(message: string): void };
}

export interface Serving { server: Server; url: string; close(): Promise<void> }

export async function startServe(opts: ServeOptions): Promise<Serving> {
  const opened = opts.store === undefined ? openStore((opts.configFile ? loadBerthConfig(opts.configFile) : loadBerthConfig()).config) : null;
  const ctx: GymContext = {
    client: opts.client, taskQueue: opts.taskQueue, configFile: opts.configFile, dataset: opts.dataset, agent: opts.agent,
    ...(opts.policy ? { policy: opts.policy } : {}), gymBatch: opts.gymBatch ?? 'gym', tasks: new Map(), store: opts.store ?? opened,
  };
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://berth');
    void (async () => {
      if (req.method === 'GET' && url.pathname === '/health') return sendJson(res, 200, { ok: true });
      if (await handleGym(ctx, req, res, url)) return;
      if (await handleRuns(ctx, req, res, url)) return;
      sendJson(res, 404, { error: `${req.method} ${url.pathname}: berth serve answers /runs (docs/training.md), /run and /aggregate_metrics (NeMo Gym)` });
    })().catch((err: unknown) => {
      opts.logger?.error(`berth serve: ${req.method} ${url.pathname}: ${(err as Error).stack ?? String(err)}`);
      if (!res.headersSent) sendJson(res, 500, { error: (err as Error).message });
      else res.destroy();
    });
  });
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 8642, opts.host ?? '127.0.0.1', () => resolve());
  });
  const { address, port } = server.address() as AddressInfo;
  const host = address.includes(':') ? `[${address}]` : address;
  return {
    server, url: `http://${host}:${port}`,
    close: () => new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => { opened?.destroy(); resolve(); });
    }),
  };
}
