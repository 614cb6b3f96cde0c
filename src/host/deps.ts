// What the activities work with (docs/design.md section 6: made by a factory from their dependencies): built once per
// worker by src/worker.ts, so two workers in one process (other engines, other queues) share nothing.
import { DockerSandboxProvider, KubernetesSandboxProvider } from '../sandbox/index.ts';
import type { SandboxDriver, SandboxProvider, SlotStore } from '../sandbox/index.ts';
import { filesQueueName, hostQueueName } from '../config/index.ts';
import type { ModelGateway } from '../gateway/index.ts';
import { composeSettings, finalStateRetentionDays, subnetSettings } from '../config/env.ts';
import { homePath } from '../config/paths.ts';
import { loadBerthConfig, type SandboxProviderName } from '../config/berth-config.ts';
import type { HostLease } from '../activities/types.ts';
import { hostIdentity } from './host-identity.ts';
import { homeId } from './home-id.ts';
import { stopWorkerGateway, workerGateway } from './model-gateway.ts';
import type { OnDemand } from './on-demand.ts';
import { workerEgress, type NetworkDeps } from './phase-network.ts';
import { RemovalJournal } from './removal-journal.ts';
import { GROUP_PREFIX, Remover } from './remover.ts';
import { slotCapacity, slotsFile } from '../config/slots.ts';
import { HostSlots } from './slots.ts';
import { ClusterSlots } from './cluster-slots.ts';
import type { SandboxSlots } from './sandbox-slots.ts';
import { warmPoolEnabled } from '../config/warm-pool.ts';
import { poolOwnerTag } from './pool-owner.ts';
import { WarmPool } from './warm-pool.ts';
import { poolCapacity } from './warm-pool-plan.ts';
import { episodeTaskLoader, type EpisodeTaskLoader } from './task-loader.ts';

/** How often one waiting process looks for slots nobody else will free. */
const RECONCILE_EVERY_MS = 10_000;

export interface HostServices extends NetworkDeps {
  /** This host's sandbox (a Docker engine, or a Kubernetes cluster): every host activity talks to it through the provider. */
  provider: SandboxProvider;
  /** The driver under the provider (groups: Compose tasks), on the same engine connection. */
  driver: SandboxDriver;
  /** This host's name and sandbox queue (and, on a cluster, the queue of this BERTH_HOME's episode files). */
  identity: HostLease;
  /** The sandbox queue's slots, shared with every worker process polling it (under BERTH_HOME/slots, or in the cluster). */
  slots: SandboxSlots;
  /** The host queue's background remover; its journal is the queue's own, so a worker on another engine never resumes it. */
  remover: Remover;
  /** Sandboxes seeded ahead for the episodes this host runs next; undefined when turned off (--no-warm-pool, [worker].warm_pool). */
  pool: WarmPool | undefined;
  loadEpisodeTask: EpisodeTaskLoader;
  gateway: OnDemand<ModelGateway>;
  /** Whether a waiting pickHost should reconcile the slots now: once per RECONCILE_EVERY_MS for all of this worker's waiters. */
  reconcileDue(): boolean;
  /** A warning (keyed by what it is about: a task, an episode) goes to this worker's log once per key. */
  warnOnce(key: string, message: string): void;
}

/** Keys remembered by warnOnce: the newest this many (keys per episode would otherwise grow with the worker's life). */
const WARNED_KEYS_KEPT = 10_000;

/** `warn` once per key, remembering the newest WARNED_KEYS_KEPT keys. */
export function onceLog(warn: (message: string) => void, kept = WARNED_KEYS_KEPT): (key: string, message: string) => void {
  const warned = new Set<string>();
  return (key, message) => {
    if (warned.has(key)) return;
    warned.add(key);
    if (warned.size > kept) warned.delete(warned.values().next().value!);
    warn(message);
  };
}

/** The engine and its egress: all seeding an agent's sandbox needs besides the task (tests use it on its own). */
export function sandboxDeps(provider: SandboxProvider): NetworkDeps {
  return { provider, egress: workerEgress(provider) };
}

/**
 * This host's sandbox: `sandbox` (`--sandbox`), else berth.toml [sandbox] provider, else Docker. The engine beside the
 * worker keeps its state under BERTH_HOME with the settings of src/config/env.ts; on Kubernetes it builds the images
 * that are pushed to [kubernetes].registry.
 */
export function hostProvider(sandbox?: SandboxProviderName): SandboxProvider {
  const { config, file } = loadBerthConfig();
  const local = new DockerSandboxProvider(undefined, {
    stateDir: homePath(), subnets: subnetSettings(), compose: composeSettings(), finalStateRetentionDays: finalStateRetentionDays(),
  });
  if ((sandbox ?? config.sandbox.provider) === 'docker') return local;
  const k = config.kubernetes;
  if (!k.registry) {
    throw new Error(`${file ?? 'berth.toml (none found)'}: key kubernetes.registry: the kubernetes sandbox (--sandbox kubernetes) needs the registry the ` +
      'cluster pulls task images from. Add [kubernetes] registry = "host:port" (docs/kubernetes.md).');
  }
  return new KubernetesSandboxProvider({
    local, registryHost: k.registry, compose: composeSettings(), ...(k.namespace ? { namespace: k.namespace } : {}), ...(k.kubeconfig ? { kubeconfigFile: k.kubeconfig } : {}),
    ...(k.docker_config ? { dockerConfig: k.docker_config } : {}),
    ...(k.image_pull_secret ? { imagePullSecret: k.image_pull_secret } : {}),
    ...(k.egress_address ? { egressAddress: k.egress_address } : {}),
    ...(k.network_policies !== undefined ? { networkPolicies: k.network_policies } : {}),
    ...(k.max_pods !== undefined ? { maxPods: k.max_pods, maxPodsFrom: `${file} [kubernetes].max_pods` } : {}),
  });
}

/**
 * The slots of a sandbox every worker reaches (a cluster), kept there: one set per cluster and namespace, whatever
 * queue suffix a worker has, so [kubernetes].max_pods bounds every worker of the namespace together.
 */
export async function clusterSlotStore(provider: SandboxProvider): Promise<SlotStore | undefined> {
  return provider.slotStore?.(hostQueueName((await provider.engineInfo()).id));
}

/** `provider`: the engine to work on (tests hand in their own); by default this host's. */
const canRename = (p: SandboxProvider): p is SandboxProvider & Required<Pick<SandboxProvider, 'rename'>> => typeof p.rename === 'function';

export async function createHostServices(opts: {
  provider?: SandboxProvider; sandbox?: SandboxProviderName; hostQueueSuffix?: string; warmPool?: boolean;
  /** Where warnOnce's warnings go (the worker hands in the activity logger); by default the console. */
  warn?: (message: string) => void;
} = {}): Promise<HostServices> {
  const warn = opts.warn ?? ((m: string) => console.warn(`berth worker: ${m}`));
  const provider = opts.provider ?? hostProvider(opts.sandbox);
  const { driver } = provider;
  const store = await clusterSlotStore(provider);
  const sandboxHost = await hostIdentity({ provider, suffix: opts.hostQueueSuffix });
  // A cluster's queue is shared by workers on any number of machines: each BERTH_HOME serves its episode files on a queue of its own.
  const identity = store ? { ...sandboxHost, filesQueue: filesQueueName(sandboxHost.queue, homeId()) } : sandboxHost;
  const remover = new Remover({
    remove: (name) => (name.startsWith(GROUP_PREFIX) ? driver.remove({ name: name.slice(GROUP_PREFIX.length), kind: 'group' }) : provider.teardown(name)),
    journal: new RemovalJournal(homePath('removals', identity.queue)),
  });
  let reconciledAt = 0;
  const warnOnce = onceLog(warn);
  const network = sandboxDeps(provider);
  const slots = store ? new ClusterSlots(store) : new HostSlots(slotsFile(identity.queue), slotCapacity().slots);
  const loadEpisodeTask = episodeTaskLoader();
  // A pool claims by renaming; a provider that cannot rename keeps none.
  const pool = (opts.warmPool ?? warmPoolEnabled().on) && canRename(provider) && slots instanceof HostSlots
    ? new WarmPool({
      ...network, provider, slots, remover, loadEpisodeTask, queue: identity.queue, owner: poolOwnerTag(), max: poolCapacity(slots.capacity),
      log: (m) => console.warn(`berth worker: ${m}`),
    })
    : undefined;
  return {
    ...network,
    provider, driver, identity, remover, slots, pool, loadEpisodeTask,
    gateway: workerGateway(provider),
    reconcileDue: () => {
      if (Date.now() - reconciledAt <= RECONCILE_EVERY_MS) return false;
      reconciledAt = Date.now();
      return true;
    },
    warnOnce,
  };
}

/** How long a worker that is shutting down waits for the sandbox removals it has pending. */
const REMOVAL_DRAIN_MS = 30_000;

/** A stopping worker's last words: its pending removals waited for (bounded; the next start removes the rest), its gateway stopped. */
export async function releaseHostServices(deps: HostServices): Promise<void> {
  await deps.pool?.close();
  const left = await deps.remover.drain(REMOVAL_DRAIN_MS);
  if (left > 0) console.warn(`berth worker: ${left} sandbox removal(s) still pending after ${REMOVAL_DRAIN_MS / 1000} s; the next worker start removes them`);
  await stopWorkerGateway(deps.gateway);
}
