import { logLevel } from './config/env.ts';
import { DefaultLogger, NativeConnection, Runtime, Worker, bundleWorkflowCode, type LogLevel, type WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { log as activityLog } from '@temporalio/activity';
import { createHostServices, releaseHostServices, type HostServices } from './host/deps.ts';
import { createHostActivities } from './activities/host-activities.ts';
import { createSharedActivities } from './activities/shared-activities.ts';
import type { BatchJobFilesActivity } from './activities/types.ts';
import { homePath } from './config/paths.ts';
import { Client, Connection, WorkflowNotFoundError } from '@temporalio/client';
import { reconcileSlots, runIsOpen, seedBoundMs } from './host/slot-reconcile.ts';
import { freeing } from './host/tear-down.ts';
import { removeOrphanSandboxes, type JanitorReport } from './host/host-upkeep.ts';
import { slotCapacity } from './config/slots.ts';
import { ClusterSlots } from './host/cluster-slots.ts';
import { hostPollers, withoutGoneLocal } from './config/pollers.ts';
import { alive } from './config/process.ts';
import { SHARED_QUEUE, sandboxSharedQueue } from './config/index.ts';
import type { SandboxProviderName } from './config/berth-config.ts';

// The CLI's commands that act on this host's engine reach it here (it may not import the sandbox): its identity for
// `berth server status`, `berth gc`, `berth agents`, and the janitor below.
export { hostIdentity } from './host/host-identity.ts';
export { clusterSandboxStatus, type ClusterSandboxStatus } from './host/cluster-status.ts';
export { installedAgentListing, removeKeptStates, retentionDays, type InstalledAgentListing, type JanitorReport } from './host/host-upkeep.ts';

const workflowsDir = join(dirname(fileURLToPath(import.meta.url)), 'workflows');
/** The workflows' entry in the tree this runs from: src/ (TypeScript) in a checkout, dist/ (compiled) in a package. */
const workflowsEntry = join(workflowsDir, `index${extname(fileURLToPath(import.meta.url))}`);

/** Bundling takes seconds on 2 cores: keep one bundle per content of src/workflows. */
export async function workflowBundle(): Promise<WorkflowBundleWithSourceMap> {
  const h = createHash('sha256');
  for (const f of readdirSync(workflowsDir).sort()) h.update(f).update(readFileSync(join(workflowsDir, f)));
  const dir = homePath('bundles');
  const file = join(dir, `${h.digest('hex').slice(0, 24)}.js`);
  if (existsSync(file)) return { code: readFileSync(file, 'utf8') } as WorkflowBundleWithSourceMap;
  const bundle = await bundleWorkflowCode({ workflowsPath: workflowsEntry, logger: quietLogger });
  mkdirSync(dir, { recursive: true });
  writeFileSync(file, bundle.code);
  return bundle;
}

const quietLogger = {
  log() {}, trace() {}, debug() {}, info() {},
  warn: (m: string) => console.warn(m), error: (m: string) => console.error(m),
};

let runtimeInstalled = false;

/** The SDK logs every worker state change at INFO; Berth's workers speak up only for warnings. */
export function installRuntime(): void {
  if (runtimeInstalled) return;
  runtimeInstalled = true;
  const level = logLevel() as LogLevel;
  Runtime.install({ logger: new DefaultLogger(level) });
}

export interface WorkerOptions {
  address: string;
  namespace?: string;
  /** The shared queue; tests use one per file. */
  taskQueue?: string;
  /** Appended to this host's sandbox queue (tests isolate their workers with it). */
  hostQueueSuffix?: string;
  /** `--sandbox`: the sandbox this worker's episodes run in; default berth.toml [sandbox] provider. */
  sandbox?: SandboxProviderName;
  /** Shared-queue activities whose code is above this layer (the batch's job files, from the client library). */
  sharedExtras?: BatchJobFilesActivity;
}

/** How often a worker looks for slots of its host that nobody else will free (src/host/slot-reconcile.ts). */
const RECONCILE_EVERY_MS = 30_000;

/**
 * This host's two workers: the shared queue (workflows, planning) and the sandbox queue named after the engine,
 * with activities built from `deps` (built here from `opts` when not given). `deps` go to releaseHostServices once
 * the workers have stopped.
 */
export async function createWorkers(opts: WorkerOptions, given?: HostServices): Promise<{ workers: Worker[]; connection: NativeConnection; sharedQueue: string; hostQueue: string; deps: HostServices }> {
  installRuntime();
  const deps = given ?? await createHostServices({ hostQueueSuffix: opts.hostQueueSuffix, warn: (m) => activityLog.warn(m), ...(opts.sandbox ? { sandbox: opts.sandbox } : {}) });
  const sharedQueue = sandboxSharedQueue(opts.taskQueue ?? SHARED_QUEUE, deps.driver.sandbox);
  const connection = await NativeConnection.connect({ address: opts.address });
  const namespace = opts.namespace ?? 'default';
  const { identity: { queue }, slots, remover } = deps;
  /** The SDK's default of 100 at once would cap a host with more slots. */
  const activityRoom = Math.max(100, slots.capacity + 16);
  const resumed = remover.resume((key) => freeing(slots, key));
  if (resumed > 0) console.log(`berth worker: removing the sandboxes of ${resumed} torn-down episode(s) left in the removal journal`);
  const bundle = await workflowBundle();
  const shared = await Worker.create({
    connection, namespace, taskQueue: sharedQueue, workflowBundle: bundle, activities: { ...createSharedActivities(deps), ...opts.sharedExtras },
    // A waiting pickHost's heartbeat says which host is full; it reaches `berth status` within this.
    maxHeartbeatThrottleInterval: '3 seconds',
    maxConcurrentActivityTaskExecutions: activityRoom,
  });
  const hostActivities = createHostActivities(deps, { workflowQueue: sharedQueue });
  const host = await Worker.create({
    connection, namespace, taskQueue: queue, activities: hostActivities,
    // Every slot's episode may be in a long activity here at once (its agent turn), and removals and preparing too.
    maxConcurrentActivityTaskExecutions: activityRoom,
    // A cancelled episode waits for its seedThenAgentTurn to stop, which learns of it from a heartbeat's answer: within
    // this, not the SDK's default of 0.8 of the heartbeat timeout (36 s).
    maxHeartbeatThrottleInterval: '3 seconds',
  });
  // On a cluster: the episodes this BERTH_HOME keeps (their files, and an openai turn's conversation) are reached here.
  const files = deps.identity.filesQueue
    ? [await Worker.create({ connection, namespace, taskQueue: deps.identity.filesQueue, activities: hostActivities, maxConcurrentActivityTaskExecutions: activityRoom })]
    : [];
  const client = new Client({ connection, namespace });
  const reconcile = () => {
    reconcileSlots({ slots, remover, isOpen: runIsOpen(client), seedBoundMs: seedBoundMs() })
      .then((done) => { for (const line of done) console.log(`berth worker: slot ${line}`); })
      .catch(() => undefined);
  };
  // Once now too: a worker restarted after a kill removes what its predecessor's warm pool held at once, not 30 s on.
  reconcile();
  const timer = setInterval(reconcile, RECONCILE_EVERY_MS);
  // Unref'd: it never keeps a stopping process alive, and once the connection is closed its calls fail quietly.
  timer.unref();
  return { workers: [shared, host, ...files], connection, sharedQueue, hostQueue: queue, deps };
}

/** Tells the log what this worker serves, and which other workers already poll the same host (they share its slots). */
async function announce(deps: HostServices, address: string, namespace: string): Promise<void> {
  const { host, queue } = deps.identity;
  await deps.slots.refresh().catch(() => undefined);
  const slots = deps.slots.capacity;
  const from = deps.slots instanceof ClusterSlots ? `${deps.slots.bound}, counted in the cluster` : slotCapacity().from;
  const files = deps.identity.filesQueue ? `, episode files on ${deps.identity.filesQueue}` : '';
  console.log(`berth worker: ${deps.driver.sandbox} sandbox on ${host}, sandbox queue ${queue}${files}, ${slots} sandbox slots (${from}), warm pool ${deps.pool ? 'on' : 'off'}`);
  const others = withoutGoneLocal(await hostPollers(address, namespace, queue).catch(() => []), alive);
  if (others.length > 0) {
    console.log(`berth worker: ${others.length} other worker(s) already poll this host's queue ${queue} (${others.map((p) => p.identity).join(', ')}); ` +
      `they share its ${slots} sandbox slots (${deps.slots.where})`);
  }
}

/** isLive backed by Temporal: live means the workflow's latest run is RUNNING. */
export function temporalLiveness(client: Client): (workflowId: string) => Promise<boolean> {
  return async (workflowId) => {
    try {
      return (await client.workflow.getHandle(workflowId).describe()).status.name === 'RUNNING';
    } catch (err) {
      if (err instanceof WorkflowNotFoundError) return false;
      throw err;
    }
  };
}

/** The janitor: removes this host's sandboxes whose episode workflow no longer runs, as Temporal tells (`berth janitor`). */
export function removeOrphans(client: Client, provider?: HostServices['provider']): Promise<JanitorReport> {
  return removeOrphanSandboxes(temporalLiveness(client), provider);
}

/** Removes sandboxes whose episode no longer runs, so a crash before this start never leaks containers. */
async function janitorAtStart(deps: HostServices, address: string, namespace: string): Promise<void> {
  const connection = await Connection.connect({ address });
  try {
    const report = await removeOrphans(new Client({ connection, namespace }), deps.provider);
    if (report.removed.length > 0) console.log(`berth worker: janitor removed ${report.removed.length} orphaned sandbox(es)`);
  } finally {
    await connection.close();
  }
}

export async function runWorkers(opts: WorkerOptions & { janitor?: boolean; warmPool?: false }): Promise<void> {
  const namespace = opts.namespace ?? 'default';
  const deps = await createHostServices({ hostQueueSuffix: opts.hostQueueSuffix, warn: (m) => activityLog.warn(m), ...(opts.sandbox ? { sandbox: opts.sandbox } : {}), ...(opts.warmPool === false ? { warmPool: false } : {}) });
  if (opts.janitor) await janitorAtStart(deps, opts.address, namespace);
  await announce(deps, opts.address, namespace);
  const { workers, connection } = await createWorkers(opts, deps);
  try {
    await Promise.all(workers.map((w) => w.run()));
  } finally {
    await releaseHostServices(deps);
    await connection.close();
  }
}
