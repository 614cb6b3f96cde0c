// A Compose group's lifecycle on Kubernetes (group-spec.ts says why it is one pod): Compose reads the file, the
// sidecars' images go through the registry, the pod is made (or adopted), the task's bind-mounted files are copied in
// through the loader, main is seeded, then the gate lets main's dependents start; the driver watches the pod as
// `up --wait` watches containers. Removal is the pod's.
import type { CoreV1Api, V1Pod } from '@kubernetes/client-node';
import { existsSync, statSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { resolveComposeModel } from '../compose/config.ts';
import type { ComposeCliSettings } from '../compose/cli.ts';
import { defaultSizedSidecars, MAIN_SERVICE, type ComposeModel } from '../compose/model.ts';
import type { ComposeFileSpec, FilesPort, GroupCreateResult, GroupHandle, GroupSpec, ServiceHandle } from '../driver.ts';
import { SandboxLost, SandboxNeverReady, SeedFailed } from '../errors.ts';
import { uploadPath } from '../files.ts';
import type { ImageConfig } from '../image-config.ts';
import { isSeeded } from '../seed-scripts.ts';
import {
  ANNOTATION_GROUP, ANNOTATION_SERVICES, groupPod, groupRefusals, LOADER, LOADER_DONE, MAIN_GATE, refusalMessage, volumePrefills,
  type GroupOrder, type ServiceEntry,
} from './group-spec.ts';
import { groupState, type GroupState } from './group-state.ts';
import { PullFailureClock } from './pull-failure.ts';
import { rebasedArchive } from './volume-prefill.ts';
import type { PodEgress } from './egress.ts';
import { containerStatus, serviceContainerId } from './pod-address.ts';
import { CONTAINER, podName } from './pod-spec.ts';

/** What the group needs of the driver. */
export interface GroupPort extends FilesPort {
  readonly core: CoreV1Api;
  readonly namespace: string;
  readonly startTimeoutMs: number;
  readonly compose: ComposeCliSettings | undefined;
  /** The Secret the group's pod pulls with, when the registry needs credentials (pull-secret.ts). */
  readonly imagePullSecret?: string;
  readPod(name: string): Promise<V1Pod | undefined>;
  deletePod(name: string, wait: boolean): Promise<boolean>;
  imageConfiguration(ref: string): Promise<ImageConfig | null>;
  /** A sidecar's image (a name the local engine has) as the reference pods pull. */
  publishImage(ref: string): Promise<string>;
  /** The files at `path` in an image, from the engine beside the worker (null: none there, or no engine to ask). */
  imagePathArchive(image: string, path: string): Promise<Buffer | null>;
  /** main's keep-alive reached `sleep infinity` (its root setup is done). */
  keepAliveRuns(main: ServiceHandle): Promise<boolean>;
  /** The pod's egress controller (egress.ts): every service shares the pod's network namespace, so one holds them all. */
  readonly egress: Pick<PodEgress, 'withController' | 'startFailure'>;
}

/**
 * Where a group's pod starts and whether its network changes: the way out its baseline joins first (a task whose
 * network switches by phase), else none for an internal group, else the bridge. Loopback stays open in every mode, so
 * the services keep reaching each other by name (127.0.0.1), as a Docker group on its internal network does.
 */
export function groupNetwork(spec: Pick<GroupSpec, 'internal' | 'attachFirst'>): { network: string; networkPhases: boolean } {
  if (spec.attachFirst !== undefined) return { network: spec.attachFirst[0] ?? 'none', networkPhases: true };
  return { network: spec.internal ? 'none' : 'bridge', networkPhases: false };
}

const LOG_LINES = 40;
const LOG_CHARS = 2000;

function entriesOf(pod: V1Pod): Record<string, ServiceEntry> {
  try {
    return JSON.parse(pod.metadata?.annotations?.[ANNOTATION_SERVICES] ?? '{}') as Record<string, ServiceEntry>;
  } catch {
    return {};
  }
}

function handleOfGroup(project: string, pod: V1Pod, exited: readonly string[] = []): GroupHandle {
  const name = pod.metadata!.name!;
  const services: Record<string, ServiceHandle> = {};
  for (const [service, e] of Object.entries(entriesOf(pod))) {
    services[service] = { name: service === MAIN_SERVICE ? project : `${project}/${service}`, containerId: serviceContainerId(name, e.container), user: e.user, workdir: e.workdir };
  }
  if (!services[MAIN_SERVICE]) throw new SandboxLost(project, new Error(`pod ${name} has no main service`));
  return { project, services, networks: [], stopped: [...exited] };
}

/** The order a pod was made with, read back from its spec (init containers in order, the regular ones after). */
function orderOf(pod: V1Pod): { order: GroupOrder; containers: Record<string, string> } {
  const entries = entriesOf(pod);
  const byContainer = new Map(Object.entries(entries).map(([s, e]) => [e.container, s]));
  const init = (pod.spec?.initContainers ?? []).flatMap((c) => (byContainer.has(c.name) ? [byContainer.get(c.name)!] : []));
  const oneShots = (pod.spec?.initContainers ?? []).filter((c) => byContainer.has(c.name) && c.restartPolicy !== 'Always').map((c) => byContainer.get(c.name)!);
  const leaves = (pod.spec?.containers ?? []).flatMap((c) => (byContainer.has(c.name) ? [byContainer.get(c.name)!] : []));
  return { order: { init, oneShots, leaves }, containers: Object.fromEntries(Object.entries(entries).map(([s, e]) => [s, e.container])) };
}

export class KubernetesGroups {
  constructor(private readonly port: GroupPort) {}

  async inspect(project: string): Promise<GroupHandle> {
    const pod = await this.port.readPod(podName(project));
    if (!pod || pod.metadata?.deletionTimestamp) throw new SandboxLost(project, new Error(`the group's pod ${podName(project)} is gone`));
    if (!containerStatus(pod, CONTAINER)?.state?.running) throw new SandboxLost(project, new Error(`main of pod ${podName(project)} is not running`));
    const { order, containers } = orderOf(pod);
    return handleOfGroup(project, pod, groupState(pod, order, containers).exited);
  }

  /** The file's refusals that need no image (plan time): what the pod cannot map, by key. */
  async refusal(spec: ComposeFileSpec): Promise<string | null> {
    const refusals = groupRefusals(await this.resolve(spec), dirname(spec.projectDir));
    return refusals.length > 0 ? refusalMessage(spec.composeFile, refusals) : null;
  }

  /** Per pod volume, the files Docker would give it first: those of the first image with anything at its mount point. */
  private async volumeFiles(model: ComposeModel, imageOf: (service: string) => string): Promise<Map<string, Buffer>> {
    const files = new Map<string, Buffer>();
    for (const [volume, candidates] of volumePrefills(model)) {
      for (const c of candidates) {
        const archive = await this.port.imagePathArchive(imageOf(c.service), c.target);
        if (archive) {
          files.set(volume, archive);
          break;
        }
      }
    }
    return files;
  }

  private async resolve(spec: ComposeFileSpec): Promise<ComposeModel> {
    const stateDir = await mkdtemp(join(tmpdir(), 'berth-k8s-group-'));
    try {
      return await resolveComposeModel(spec, stateDir, this.port.compose);
    } finally {
      await rm(stateDir, { recursive: true, force: true });
    }
  }

  async createOrAdopt(spec: GroupSpec): Promise<GroupCreateResult> {
    const name = podName(spec.project);
    const adopted = await this.tryAdopt(spec.project);
    if (adopted) return { group: adopted, adopted: true, defaultSized: [] };

    const resolved = await this.resolve(spec);
    const taskDir = dirname(spec.projectDir);
    const early = groupRefusals(resolved, taskDir);
    if (early.length > 0) throw new SeedFailed('harbor:seed_failed', refusalMessage(spec.composeFile, early));
    const named = await spec.prepareImages(resolved);
    const images: Record<string, string> = {};
    const imageConfigs: Record<string, ImageConfig | null> = {};
    for (const service of Object.keys(resolved.services)) {
      if (service === MAIN_SERVICE) continue;
      const ref = named[service] ?? resolved.services[service]!.image!;
      images[service] = await this.port.publishImage(ref);
      imageConfigs[service] = await this.port.imageConfiguration(images[service]).catch(() => null);
    }
    const refusals = groupRefusals(resolved, taskDir, imageConfigs);
    if (refusals.length > 0) throw new SeedFailed('harbor:seed_failed', refusalMessage(spec.composeFile, refusals));
    const main = spec.mainFor?.(resolved) ?? spec.main;
    const prefilled = await this.volumeFiles(resolved, (service) => (service === MAIN_SERVICE ? main.image : named[service] ?? resolved.services[service]!.image!));
    const plan = groupPod({
      podName: name, project: spec.project, labels: spec.labels, model: resolved, images, imageConfigs, main, prefilled: new Set(prefilled.keys()),
      ...(spec.sidecarEnv ? { sidecarEnv: spec.sidecarEnv } : {}),
      isFile: (source) => { try { return statSync(source).isFile(); } catch { return false; } },
    });
    await this.create(await this.port.egress.withController(plan.pod, groupNetwork(spec)));
    const deadline = Date.now() + Math.max(spec.waitTimeoutSec * 1000, this.port.startTimeoutMs);
    if (plan.binds.length > 0 || plan.prefills.length > 0) {
      const loader: ServiceHandle = { name: `${spec.project}/${LOADER}`, containerId: serviceContainerId(name, LOADER), user: '0', workdir: '/' };
      await this.waitFor(spec.project, deadline, (pod) => Boolean(containerStatus(pod, LOADER)?.state?.running), 'the loader of the task\'s files');
      // A source that does not exist is an empty folder, as Compose creates it (create_host_path).
      for (const b of plan.binds) if (existsSync(b.source)) await uploadPath(this.port, loader, b.source, b.loaderDir);
      for (const p of plan.prefills) await this.port.putArchive(loader, '/', rebasedArchive(prefilled.get(p.volume)!, p.loaderDir));
      await this.checked(loader, ['touch', LOADER_DONE], 'finishing the copy of the task\'s files');
    }
    const group = handleOfGroup(spec.project, plan.pod);
    const mainHandle = group.services[MAIN_SERVICE]!;
    await this.waitFor(spec.project, deadline, async (pod) => Boolean(containerStatus(pod, CONTAINER)?.state?.running) && (await this.port.keepAliveRuns(mainHandle)), 'main\'s keep-alive', plan.order);
    await spec.afterMain?.(mainHandle);
    await this.checked(mainHandle, ['touch', MAIN_GATE], 'opening the gate for main\'s dependents');
    const containers = Object.fromEntries(Object.entries(plan.services).map(([s, e]) => [s, e.container]));
    let state: GroupState | undefined;
    await this.waitFor(spec.project, Date.now() + spec.waitTimeoutSec * 1000, (pod) => {
      state = groupState(pod, plan.order, containers);
      return state.state === 'ready';
    }, 'every service', plan.order);
    return { group: { ...group, stopped: [...(state?.exited ?? [])] }, adopted: false, defaultSized: defaultSizedSidecars(resolved) };
  }

  /** A pod of that name is adopted when every service is up and main finished its seed; anything else is replaced. */
  private async tryAdopt(project: string): Promise<GroupHandle | undefined> {
    const pod = await this.port.readPod(podName(project));
    if (!pod) return undefined;
    if (!pod.metadata?.deletionTimestamp && pod.metadata?.annotations?.[ANNOTATION_GROUP] === project) {
      const { order, containers } = orderOf(pod);
      const state = groupState(pod, order, containers);
      const group = state.state === 'ready' ? handleOfGroup(project, pod, state.exited) : undefined;
      if (group && (await isSeeded(this.port, group.services[MAIN_SERVICE]!).catch(() => false))) return group;
    }
    // Half made (a worker died during the seed): RUN lines are not idempotent, so start over.
    await this.port.deletePod(podName(project), true);
    return undefined;
  }

  private async create(body: V1Pod): Promise<void> {
    if (this.port.imagePullSecret) body.spec!.imagePullSecrets = [{ name: this.port.imagePullSecret }];
    try {
      await this.port.core.createNamespacedPod({ namespace: this.port.namespace, body });
    } catch (err) {
      const code = (err as { code?: number }).code;
      if (code === 422 || code === 400) throw new SeedFailed('harbor:seed_failed', `the cluster refused the group's pod ${body.metadata?.name}: ${(err as Error).message}`);
      throw new SandboxLost(body.metadata!.name!, err);
    }
  }

  private async checked(handle: ServiceHandle, argv: string[], what: string): Promise<void> {
    const r = await this.port.exec(handle, { argv, user: '0', workdir: '/' });
    if (r.exitCode !== 0) throw new SeedFailed('harbor:seed_failed', `${what} in ${handle.name} failed (exit ${r.exitCode}): ${r.stderr.trim()}`);
  }

  /** Polls the pod until `done`; a failed service (with its log) or the deadline is the seed's failure. */
  private async waitFor(project: string, deadline: number, done: (pod: V1Pod) => boolean | Promise<boolean>, what: string, order?: GroupOrder): Promise<void> {
    const name = podName(project);
    const pullClock = new PullFailureClock();
    const pull = { hasPullSecret: this.port.imagePullSecret !== undefined, failingForMs: (c: string) => pullClock.failingForMs(c) };
    for (let attempt = 0; ; attempt++) {
      const pod = await this.port.readPod(name);
      if (!pod || pod.metadata?.deletionTimestamp) throw new SandboxLost(project, new Error(`the group's pod ${name} was deleted while starting`));
      pullClock.observe([...(pod.status?.initContainerStatuses ?? []), ...(pod.status?.containerStatuses ?? [])]);
      const { order: made, containers } = orderOf(pod);
      const state = groupState(pod, order ?? made, containers, pull);
      if (state.state === 'failed') throw await this.startFailure(pod, state);
      const egressFailed = await this.port.egress.startFailure(pod);
      if (egressFailed) throw egressFailed;
      if (await done(pod)) return;
      if (Date.now() > deadline) {
        throw new SandboxNeverReady(`the group's pod ${name}: ${what} not ready in time; services not ready: ${state.waiting.join(', ') || '(none)'}`);
      }
      await new Promise((r) => setTimeout(r, Math.min(50 * (attempt + 1), 250)));
    }
  }

  /** Each failed service with the last lines of its log, as the Docker group reports a failed `up`. */
  private async startFailure(pod: V1Pod, state: GroupState): Promise<SeedFailed> {
    const parts: string[] = [];
    for (const f of state.failures) {
      // A sidecar that exited was restarted: the log of the run that failed is the previous one.
      const previous = (containerStatus(pod, f.container)?.restartCount ?? 0) > 0;
      const log = f.container
        ? await this.port.core.readNamespacedPodLog({ name: pod.metadata!.name!, namespace: this.port.namespace, container: f.container, tailLines: LOG_LINES, previous })
          .then((t) => String(t).trimEnd()).catch(() => '') : '';
      const tail = log.length > LOG_CHARS ? `…${log.slice(-LOG_CHARS)}` : log || '(no output)';
      parts.push(`service "${f.service}" ${f.why} at start; the last lines of its log:\n${tail}`);
    }
    return new SeedFailed('harbor:seed_failed', parts.join('\n'));
  }
}

/** A group's removal: its pod (every service, every emptyDir volume with it). */
export async function removeGroupPod(port: Pick<GroupPort, 'deletePod'>, project: string): Promise<boolean> {
  return port.deletePod(podName(project), false);
}

