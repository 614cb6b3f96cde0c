import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { slotCapacity } from '../config/slots.ts';
import { codeHash, projectRoot } from './code-hash.ts';
import { alive } from '../config/process.ts';
import { readPid, spawnDetached, stopPid, tail } from './daemon.ts';
import { withLockFile } from '../config/lock-file.ts';
import { waitFor } from './health.ts';
import { queuePollers } from '../config/pollers.ts';
import { homePath } from '../config/paths.ts';
import { configFilePath, sandboxSharedQueue, sharedQueue } from '../config/index.ts';
import { loadBerthConfig } from '../config/berth-config.ts';

const pidFile = () => homePath('worker.pid');
const stampFile = () => homePath('worker.code');
const logFile = () => homePath('logs', 'worker.log');

/** Whether any worker polls the shared queue (workflow pollers). */
export async function workerPolls(address: string, namespace = 'default', taskQueue = sharedQueue()): Promise<boolean> {
  return (await queuePollers(address, namespace, taskQueue, 'workflow')).length > 0;
}

export interface WorkerInfo { pid: number; started: boolean; log: string }

/**
 * Starts (or reuses) the detached worker beside the embedded server (docs/design.md section 7, Workers
 * and hosts). A worker running other code than this checkout is replaced.
 */
export async function ensureWorker(address: string): Promise<WorkerInfo> {
  return withLockFile(homePath('worker.start.lock'), () => startOrReuse(address));
}

/**
 * Node flags a worker starts with: a small young generation keeps its resident memory about 45 MB lower at a peak
 * of 32 episodes (it holds many short-lived objects per episode), for slightly more frequent minor collections.
 */
export const WORKER_NODE_FLAGS = ['--max-semi-space-size=4'];

/** A stopping worker waits up to 30 s for its pending sandbox removals (src/worker.ts): let it. */
const WORKER_STOP_GRACE_MS = 35_000;

async function startOrReuse(address: string): Promise<WorkerInfo> {
  // The worker runs in Berth's folder but reads the berth.toml `berth` found here ([secrets], [worker]): a change of
  // that file's path or of its slots replaces it as a change of code does.
  const slots = slotCapacity().slots;
  const config = configFilePath();
  const hash = `${codeHash()} slots=${slots} config=${config ?? '-'}`;
  const pid = readPid(pidFile());
  const stamp = existsSync(stampFile()) ? readFileSync(stampFile(), 'utf8').trim() : '';
  if (alive(pid) && stamp === hash) return { pid, started: false, log: logFile() };
  if (alive(pid)) await stopPid(pidFile(), WORKER_STOP_GRACE_MS);
  const started = spawnDetached(process.execPath, [...WORKER_NODE_FLAGS, join(projectRoot, 'bin', 'berth.mjs'), 'worker'], {
    log: logFile(), pidFile: pidFile(), cwd: projectRoot,
    env: { ...process.env, TEMPORAL_ADDRESS: address, BERTH_DETACHED_WORKER: '1', BERTH_WORKER_SLOTS: String(slots), ...(config ? { BERTH_CONFIG: config } : {}) },
  });
  writeFileSync(stampFile(), `${hash}\n`);
  const queue = sandboxSharedQueue(sharedQueue(), loadBerthConfig().config.sandbox.provider);
  const polling = await waitFor(async () => alive(started) && (await workerPolls(address, undefined, queue).catch(() => false)), 90_000, 500);
  if (!polling) {
    throw new Error(`The Berth worker (pid ${started}) did not start polling within 90 s.\nLast lines of ${logFile()}:\n${tail(logFile())}`);
  }
  return { pid: started, started: true, log: logFile() };
}

export async function stopWorker(): Promise<boolean> {
  return stopPid(pidFile(), WORKER_STOP_GRACE_MS);
}

export function workerPid(): number | undefined {
  const pid = readPid(pidFile());
  return alive(pid) ? pid : undefined;
}
