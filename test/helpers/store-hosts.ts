// Two hosts and a results store for one describe block (issue 39's tests): a SeaweedFS server, one extra Docker
// engine beside the default one, two BERTH_HOMEs, a berth.toml naming the store (this process reads it too, so
// startBatch puts the store's URL on the batch), and the workers the test starts, all stopped afterwards.
import { afterAll, beforeAll } from 'vitest';
import { Connection } from '@temporalio/client';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEngines, type Engines } from './engines.ts';
import { startS3Server, type S3Server } from './s3-server.ts';
import type { WorkerProcess } from './worker-process.ts';

export const ADDRESS = '127.0.0.1:7233';

export interface StoreHosts {
  suffix: string;
  /** host A's and host B's BERTH_HOME */
  homes: [string, string];
  configFile: string;
  env: { TEMPORAL_ADDRESS: string; BERTH_TASK_QUEUE: string; BERTH_HOST_QUEUE_SUFFIX: string; BERTH_WORKER_SLOTS: string; BERTH_CONFIG: string };
  workers: WorkerProcess[];
  /** Set in beforeAll. */
  s3?: S3Server;
  engines?: Engines;
  connection?: Connection;
}

/** `name` keeps the test's queues apart; `storePrefix` is the prefix in the bucket (followed by the suffix). */
export function storeOnTwoHosts(name: string, storePrefix: string): StoreHosts {
  const suffix = `${name}-${randomBytes(3).toString('hex')}`;
  const configFile = join(mkdtempSync(join(tmpdir(), 'berth-store-config-')), 'berth.toml');
  const h: StoreHosts = {
    suffix,
    homes: [mkdtempSync(join(tmpdir(), 'berth-host-a-')), mkdtempSync(join(tmpdir(), 'berth-host-b-'))],
    configFile,
    env: { TEMPORAL_ADDRESS: ADDRESS, BERTH_TASK_QUEUE: `test-${suffix}`, BERTH_HOST_QUEUE_SUFFIX: suffix, BERTH_WORKER_SLOTS: '2', BERTH_CONFIG: configFile },
    workers: [],
  };
  const previousConfig = process.env.BERTH_CONFIG;

  beforeAll(async () => {
    [h.s3, h.engines] = await Promise.all([startS3Server(), startEngines(1)]);
    writeFileSync(configFile, h.s3.berthToml(`${storePrefix}-${suffix}`));
    process.env.BERTH_CONFIG = configFile;
    h.connection = await Connection.connect({ address: ADDRESS });
  }, 600_000);

  afterAll(async () => {
    if (previousConfig === undefined) delete process.env.BERTH_CONFIG; else process.env.BERTH_CONFIG = previousConfig;
    for (const w of h.workers) await w.stop();
    await h.connection?.close();
    await h.engines?.stop();
    await h.s3?.stop();
  }, 180_000);

  return h;
}
