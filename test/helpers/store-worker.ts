// One describe block's results store with workers of its own (issue 39's single-host tests): a SeaweedFS server, a
// prefix in its bucket, a berth.toml naming it for this process (so startBatch puts the store's URL on the batch), a
// ResultsStore to look at what went up, and queues of the block's own. Everything is stopped afterwards.
import type { Client } from '@temporalio/client';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { storeLocationOf } from '../../src/config/results-store.ts';
import { ResultsStore } from '../../src/store/index.ts';
import { startS3Server, type S3Server } from './s3-server.ts';
import { ownWorkerQueues } from './worker-process.ts';

export interface StoreWorker {
  own: ReturnType<typeof ownWorkerQueues>;
  /** Writes a berth.toml named `name` with `text`; answers its path. */
  config(name: string, text: string): string;
  /** Set in beforeAll. */
  s3: S3Server;
  store: ResultsStore;
  client: Client;
  prefix: string;
}

/** `name` keeps the block's queues apart; `prefixStem` starts the prefix in the bucket (a random suffix follows). */
export function useStoreWorker(name: string, prefixStem: string): StoreWorker {
  const configDir = mkdtempSync(join(tmpdir(), 'berth-store-config-'));
  const previousConfig = process.env.BERTH_CONFIG;
  const h = {
    own: ownWorkerQueues(name),
    config: (file: string, text: string): string => { const f = join(configDir, `${file}.toml`); writeFileSync(f, text); return f; },
  } as StoreWorker;

  beforeAll(async () => {
    h.s3 = await startS3Server();
    h.prefix = `${prefixStem}-${randomBytes(3).toString('hex')}`;
    process.env.BERTH_CONFIG = h.config('client', h.s3.berthToml(h.prefix));
    h.store = new ResultsStore({ ...storeLocationOf(`s3://${h.s3.bucket}/${h.prefix}`), endpoint: h.s3.endpoint, region: h.s3.region, pathStyle: true, keepLocal: true },
      { accessKeyId: h.s3.accessKeyId, secretAccessKey: h.s3.secretAccessKey });
    h.client = await h.own.client();
  }, 600_000);

  afterAll(async () => {
    if (previousConfig === undefined) delete process.env.BERTH_CONFIG; else process.env.BERTH_CONFIG = previousConfig;
    await h.own.stop();
    h.store?.destroy();
    await h.s3?.stop();
  }, 180_000);

  return h;
}
