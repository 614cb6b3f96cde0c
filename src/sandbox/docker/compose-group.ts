// One group's lifecycle on Docker: Compose for config and up (depends_on conditions, healthchecks,
// named volumes, `--wait`), the Engine API for everything after (exec, files, stop, removal).
import type Docker from 'dockerode';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { ENGINE, SandboxLost, SeedFailed } from '../errors.ts';
import { asSandboxError } from './loss.ts';
import { stripFrames, waitForKeepAlive } from './keep-alive.ts';
import { resumeSandbox, stopSandbox, teardownSandbox } from './lifecycle.ts';
import { answeredWithin, boundedBy, ENGINE_ANSWER_SEC } from './engine-deadline.ts';
import { LABEL_BATCH, LABEL_ROLE, LABEL_USER, LABEL_WORKDIR, LABEL_WORKFLOW } from '../names.ts';
import { isSeeded } from '../seed-scripts.ts';
import type { ExecPort, GroupCreateResult, GroupHandle, GroupSpec } from '../driver.ts';
import type { SandboxHandle, SandboxLabels } from '../types.ts';
import { projectArgs, runCompose, type ComposeCliSettings } from '../compose/cli.ts';
import { composeFailure, resolveComposeModel } from '../compose/config.ts';
/** Re-exported for the callers that read a model the way the Docker group does. */
export { resolveComposeModel } from '../compose/config.ts';
import { defaultSizedSidecars, groupModel, MAIN_SERVICE, mainAndItsDependencies, networkKeys, type ComposeModel } from '../compose/model.ts';
import { ensureGroupNetwork, removeNetwork, type SubnetSource } from './group-network.ts';
import { COMPOSE_PROJECT_LABEL, COMPOSE_SERVICE_LABEL, groupNetworkName, LABEL_GROUP } from '../group-names.ts';

const CONFIG_TIMEOUT_MS = 60_000;
const DEFAULT_NETWORK = 'default';
/** Beyond `--wait-timeout`, for Compose to create, start and report. */
const UP_GRACE_MS = 60_000;
const LOG_TAIL_LINES = 40;
const LOG_TAIL_CHARS = 2000;

/** The Docker side of a group's creation: where its subnets come from and where its project files go. */
export interface DockerGroupOptions {
  subnets: SubnetSource;
  /** One folder per project. */
  stateDir: string;
  /** Whose exec reads main's seeded marker when a group is adopted. */
  markers: ExecPort;
  compose?: ComposeCliSettings;
}

export function groupLabels(project: string, labels: SandboxLabels): Record<string, string> {
  return { [LABEL_BATCH]: labels.batch, [LABEL_WORKFLOW]: labels.workflowId, [LABEL_ROLE]: labels.role, [LABEL_GROUP]: project };
}

function projectFilter(project: string): { label: string[] } {
  return { label: [`${COMPOSE_PROJECT_LABEL}=${project}`] };
}

function handleOf(info: Docker.ContainerInspectInfo): SandboxHandle {
  const labels = info.Config.Labels ?? {};
  return {
    name: info.Name.replace(/^\//, ''),
    containerId: info.Id,
    // A service's default user; uid 0 by number, since an image without /etc/passwd (distroless, scratch) has no "root".
    user: labels[LABEL_USER] ?? (info.Config.User || '0'),
    workdir: labels[LABEL_WORKDIR] ?? (info.Config.WorkingDir || '/'),
  };
}

/** The project's containers as the engine has them; each call bounded by `answerSec` (engine-deadline.ts). */
async function projectContainers(docker: Docker, project: string, answerSec = ENGINE_ANSWER_SEC): Promise<Docker.ContainerInspectInfo[]> {
  try {
    const list = await answeredWithin(`the list of ${project}'s containers`, answerSec, (abortSignal) => docker.listContainers({ all: true, filters: projectFilter(project), abortSignal }));
    const infos = await Promise.all(list.map((c) => answeredWithin(`the inspect of ${c.Id}`, answerSec, (abortSignal) => docker.getContainer(c.Id).inspect({ abortSignal })).catch(() => null)));
    return infos.filter((i): i is Docker.ContainerInspectInfo => i !== null);
  } catch (err) {
    throw asSandboxError(project, err);
  }
}

function serviceOf(info: Docker.ContainerInspectInfo): string {
  return info.Config.Labels?.[COMPOSE_SERVICE_LABEL] ?? info.Name.replace(/^\//, '');
}

/** The group as the engine has it now; SandboxLost when main is gone. */
export async function inspectGroup(docker: Docker, project: string, answerSec = ENGINE_ANSWER_SEC): Promise<GroupHandle> {
  const infos = await projectContainers(docker, project, answerSec);
  const nets = await answeredWithin(`the list of ${project}'s networks`, answerSec, (abortSignal) => docker.listNetworks({ filters: { label: [`${LABEL_GROUP}=${project}`] }, abortSignal }))
    .catch((err: unknown) => { throw asSandboxError(project, err); });
  return handleOfGroup(project, infos, nets.map((n) => n.Name));
}

function handleOfGroup(project: string, infos: Docker.ContainerInspectInfo[], networks: string[]): GroupHandle {
  const services: Record<string, SandboxHandle> = {};
  const stopped: string[] = [];
  for (const info of infos) {
    services[serviceOf(info)] = handleOf(info);
    if (!info.State.Running) stopped.push(serviceOf(info));
  }
  if (!services[MAIN_SERVICE]) throw new SandboxLost(project, new Error('the group has no main container'));
  return { project, services, networks, stopped };
}

/** A group is adopted when every container runs and main finished its seed; otherwise it is replaced. */
async function tryAdopt(docker: Docker, markers: ExecPort, project: string, stateDir: string): Promise<GroupHandle | undefined> {
  const infos = await projectContainers(docker, project);
  const stray = await strayComposeProcesses(project, stateDir);
  if (infos.length === 0 && stray.length === 0) return undefined;
  const main = infos.find((i) => serviceOf(i) === MAIN_SERVICE);
  const expected = await expectedServices(stateDir);
  // A one-shot service that exited 0 counts as up (service_completed_successfully).
  const up = (i: Docker.ContainerInspectInfo) => i.State.Running || (i.State.Status === 'exited' && i.State.ExitCode === 0);
  const allUp = infos.every(up) && (expected === null || expected.every((s) => infos.some((i) => serviceOf(i) === s)));
  if (main && allUp && stray.length === 0 && (await isSeeded(markers, handleOf(main)))) return inspectGroup(docker, project);
  // Half made (a worker died during the seed): RUN lines are not idempotent, so start over.
  for (const pid of stray) killQuietly(pid);
  await removeGroup(docker, project);
  return undefined;
}

async function expectedServices(stateDir: string): Promise<string[] | null> {
  try {
    return Object.keys((JSON.parse(await readFile(join(stateDir, 'project.json'), 'utf8')) as ComposeModel).services);
  } catch {
    return null;
  }
}

const PID_FILE = 'compose.pid';

/** The Compose process an earlier worker of this host started for the project and left running (its pid is on record). */
async function strayComposeProcesses(project: string, stateDir: string): Promise<number[]> {
  const pid = Number((await readFile(join(stateDir, PID_FILE), 'utf8').catch(() => '')).trim());
  if (!Number.isInteger(pid) || pid <= 0) return [];
  const argv = (await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '')).split('\0');
  const at = argv.indexOf('--project-name');
  return at >= 0 && argv[at + 1] === project ? [pid] : [];
}

function killQuietly(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // already gone
  }
}

/** Create-or-adopt the group: network(s), Compose `up --wait`, then a handle per service. */
export async function createOrAdoptGroup(docker: Docker, spec: GroupSpec, options: DockerGroupOptions): Promise<GroupCreateResult & { model?: ComposeModel }> {
  const stateDir = options.stateDir;
  const adopted = await tryAdopt(docker, options.markers, spec.project, stateDir);
  if (adopted) return { group: adopted, adopted: true, defaultSized: [] };

  const labels = groupLabels(spec.project, spec.labels);
  const network = (key: string) => ensureGroupNetwork(docker, { name: groupNetworkName(spec.project, key), labels, internal: spec.internal, source: options.subnets });
  // Nearly every group uses only Compose's `default` network: make it while Compose reads the file.
  const made = network(DEFAULT_NETWORK);
  made.catch(() => undefined);
  const resolved = await resolveComposeModel(spec, stateDir, options.compose);
  const images = await spec.prepareImages(resolved);
  const networks: Record<string, string> = {};
  for (const key of networkKeys(resolved)) networks[key] = (key === DEFAULT_NETWORK ? await made : await network(key)).name;
  if (!(DEFAULT_NETWORK in networks)) await removeNetwork(docker, (await made).id);
  const main = spec.mainFor?.(resolved) ?? spec.main;
  const model = groupModel(resolved, {
    project: spec.project, labels, networks, images, ...(spec.sidecarEnv ? { sidecarEnv: spec.sidecarEnv } : {}),
    main: { ...main, keepAlive: [...main.keepAlive], labels: { [LABEL_USER]: main.user, [LABEL_WORKDIR]: main.workdir } },
  });
  const projectFile = join(stateDir, 'project.json');
  await writeFile(projectFile, JSON.stringify(model, null, 2));

  if (spec.attachFirst?.length) await createAttached(docker, spec, { projectFile, stateDir, compose: options.compose }, model, spec.attachFirst);
  const up = async (services: string[]) => {
    const run = await runCompose(
      [...projectArgs(spec.project, [projectFile], spec.projectDir), 'up', '--detach', '--no-build', '--pull', 'never', '--quiet-pull', '--no-color', ...services],
      { env: spec.interpolationEnv, timeoutMs: spec.waitTimeoutSec * 1000 + UP_GRACE_MS, pidFile: join(stateDir, PID_FILE), settings: options.compose },
    );
    if (run.code !== 0) throw await startFailure(docker, spec.project, run, spec.waitTimeoutSec);
  };
  // As `up --wait` orders it: main and what it depends on first; main seeded (its entrypoint is what its own
  // healthcheck probes) and healthy; then the services that depend on main.
  const all = Object.keys(model.services);
  const first = mainAndItsDependencies(model);
  const split = spec.afterMain !== undefined && first.length < all.length;
  await up(split ? [MAIN_SERVICE] : []);
  let group = await waitForServices(docker, spec.project, split ? first : all, Object.values(networks), spec.waitTimeoutSec);
  const mainHandle = group.services[MAIN_SERVICE]!;
  await waitForKeepAlive(docker.getContainer(mainHandle.containerId), mainHandle.name);
  if (spec.afterMain) {
    await spec.afterMain(mainHandle);
    if (model.services[MAIN_SERVICE]?.healthcheck) group = await waitForServices(docker, spec.project, split ? first : all, Object.values(networks), spec.waitTimeoutSec, true);
  }
  if (split) {
    await up([]);
    group = await waitForServices(docker, spec.project, all, Object.values(networks), spec.waitTimeoutSec, true);
  }
  return { group, adopted: false, defaultSized: defaultSizedSidecars(resolved), model };
}

/**
 * `create`, then every service (but one with its own network_mode) joined to `extra` before `up` starts it: Compose
 * cannot put a service on the engine's bridge beside its own networks, and `up` keeps a joined network.
 */
async function createAttached(docker: Docker, spec: GroupSpec, at: { projectFile: string; stateDir: string; compose: ComposeCliSettings | undefined }, model: ComposeModel, extra: readonly string[]): Promise<void> {
  const created = await runCompose(
    [...projectArgs(spec.project, [at.projectFile], spec.projectDir), 'create', '--no-build', '--pull', 'never', '--quiet-pull'],
    { env: spec.interpolationEnv, timeoutMs: CONFIG_TIMEOUT_MS, pidFile: join(at.stateDir, PID_FILE), settings: at.compose },
  );
  if (created.code !== 0) throw new SeedFailed('harbor:seed_failed', composeFailure('docker compose create', created, CONFIG_TIMEOUT_MS / 1000));
  for (const info of await projectContainers(docker, spec.project)) {
    if (model.services[serviceOf(info)]?.network_mode !== undefined) continue;
    for (const network of extra) {
      if (network in (info.NetworkSettings.Networks ?? {})) continue;
      await docker.getNetwork(network).connect({ Container: info.Id }).catch((err: unknown) => { throw asSandboxError(spec.project, err); });
    }
  }
}

type ServiceState = 'ready' | 'waiting' | 'failed';

/**
 * `up --wait`'s rule: running, healthy where it has a healthcheck, or (a one-shot service) exited 0. main needs only
 * to run until it is seeded (`mainSeeded`): its own healthcheck probes what the seed starts.
 */
export function serviceState(service: string, state: Docker.ContainerInspectInfo['State'], mainSeeded = false): ServiceState {
  if (state.Running) {
    const health = service === MAIN_SERVICE && !mainSeeded ? undefined : state.Health?.Status;
    // main's probes ran while Berth was still seeding it: an unhealthy main may turn healthy, until the budget ends.
    if (health === 'unhealthy') return service === MAIN_SERVICE ? 'waiting' : 'failed';
    return health === undefined || health === 'healthy' ? 'ready' : 'waiting';
  }
  if (state.Status === 'created' || state.Status === 'restarting') return 'waiting';
  return state.ExitCode === 0 && service !== MAIN_SERVICE ? 'ready' : 'failed';
}

/**
 * After `up --detach` (which already held each service back until its depends_on conditions held): every
 * service ready, as `up --wait` would have it, watched through the Engine API (polling it is faster than
 * Compose's own wait), or the start's failure with the failing services' logs.
 */
async function waitForServices(docker: Docker, project: string, services: string[], networks: string[], timeoutSec: number, mainSeeded = false): Promise<GroupHandle> {
  const deadline = Date.now() + timeoutSec * 1000;
  for (let attempt = 0; ; attempt++) {
    const infos = await projectContainers(docker, project);
    const states = services.map((s) => {
      const info = infos.find((i) => serviceOf(i) === s);
      return info ? serviceState(s, info.State, mainSeeded) : 'waiting';
    });
    const timedOut = Date.now() > deadline;
    if (states.includes('failed') || (timedOut && states.includes('waiting'))) {
      throw await startFailure(docker, project, { stdout: '', stderr: timedOut ? `services not ready within ${timeoutSec} s: ${services.filter((_, i) => states[i] === 'waiting').join(', ')}` : '', timedOut }, timeoutSec);
    }
    if (states.every((st) => st === 'ready')) return handleOfGroup(project, infos, networks);
    await sleep(Math.min(25 * (attempt + 1), 250));
  }
}

/** Why `up` failed: each service that exited or never became healthy, with a bounded tail of its log. */
async function startFailure(docker: Docker, project: string, up: { stdout: string; stderr: string; timedOut: boolean }, waitSec: number): Promise<Error> {
  let infos: Docker.ContainerInspectInfo[];
  try {
    infos = await projectContainers(docker, project);
  } catch (err) {
    return err as Error;
  }
  const parts: string[] = [];
  for (const info of infos) {
    const health = info.State.Health?.Status;
    // A one-shot service that exited 0 (service_completed_successfully) is no failure.
    const exited = !info.State.Running && info.State.Status !== 'created' && info.State.ExitCode !== 0;
    if (!exited && health !== 'unhealthy' && !(up.timedOut && health === 'starting')) continue;
    const what = exited ? `exited with code ${info.State.ExitCode}${info.State.OOMKilled ? ' (out of memory)' : ''}` : 'never became healthy';
    parts.push(`service "${serviceOf(info)}" ${what} at start; the last lines of its log:\n${await logTail(docker, info.Id)}`);
  }
  const summary = composeFailure('docker compose up', up, waitSec);
  return new SeedFailed('harbor:seed_failed', parts.length > 0 ? `${parts.join('\n')}\n(${summary.length > 1000 ? `…${summary.slice(-1000)}` : summary})` : summary);
}

export async function logTail(docker: Docker, containerId: string): Promise<string> {
  try {
    const raw = (await docker.getContainer(containerId).logs({ stdout: true, stderr: true, tail: LOG_TAIL_LINES })) as Buffer;
    const text = stripFrames(raw).trimEnd();
    return text.length > LOG_TAIL_CHARS ? `…${text.slice(-LOG_TAIL_CHARS)}` : text || '(no output)';
  } catch {
    return '(log unavailable)';
  }
}

export interface GroupRemoval {
  containers: number;
  networks: number;
  volumes: number;
}

/**
 * Removes every container, network and volume of the project; what is already gone is fine. Each engine call is
 * bounded by `answerSec` (engine-deadline.ts): on an engine that stopped answering the removal fails, to be retried.
 */
export async function removeGroup(docker: Docker, project: string, answerSec = ENGINE_ANSWER_SEC): Promise<GroupRemoval> {
  const byLabel = { label: [`${LABEL_GROUP}=${project}`] };
  const bounded = boundedBy(answerSec);
  try {
    const containers = new Map<string, string>();
    for (const filters of [projectFilter(project), byLabel]) {
      for (const c of await bounded(`the list of the containers of group ${project}`, (abortSignal) => docker.listContainers({ all: true, filters, abortSignal }))) containers.set(c.Id, c.Id);
    }
    const removed = await Promise.all([...containers.keys()].map(async (id) => (await teardownSandbox(docker, id, answerSec)).removed));
    const nets = await bounded(`the list of the networks of group ${project}`, (abortSignal) => docker.listNetworks({ filters: byLabel, abortSignal }));
    const netsRemoved = await Promise.all(nets.map((n) => bounded(`the removal of network ${n.Name} of group ${project}`, (abortSignal) => removeNetwork(docker, n.Id, abortSignal))));
    const vols = (await bounded(`the list of the volumes of group ${project}`, (abortSignal) => docker.listVolumes({ filters: byLabel, abortSignal }))).Volumes ?? [];
    const volsRemoved = await Promise.all(vols.map((v) => bounded(`the removal of volume ${v.Name} of group ${project}`, (abortSignal) => removeVolume(docker, v.Name, abortSignal))));
    return {
      containers: removed.filter(Boolean).length,
      networks: netsRemoved.filter(Boolean).length,
      volumes: volsRemoved.filter(Boolean).length,
    };
  } catch (err) {
    throw asSandboxError(project, err);
  }
}

async function removeVolume(docker: Docker, name: string, abortSignal?: AbortSignal): Promise<boolean> {
  try {
    await docker.getVolume(name).remove(abortSignal ? { abortSignal } : {});
    return true;
  } catch (err) {
    if ((err as { statusCode?: number }).statusCode === 404) return false;
    throw err;
  }
}

export interface LabelledGroup {
  project: string;
  workflowId: string;
  containers: number;
  networks: number;
  volumes: number;
}

/** Every group on the engine whose resources carry all the given labels (`key` or `key=value`). */
export async function listGroups(docker: Docker, labels: string[] = [LABEL_WORKFLOW], answerSec = ENGINE_ANSWER_SEC): Promise<LabelledGroup[]> {
  const filters = { label: [...labels, LABEL_GROUP] };
  const groups = new Map<string, LabelledGroup>();
  const note = (l: Record<string, string> | undefined, field: 'containers' | 'networks' | 'volumes') => {
    const project = l?.[LABEL_GROUP];
    if (!project) return;
    const g = groups.get(project) ?? { project, workflowId: l?.[LABEL_WORKFLOW] ?? '', containers: 0, networks: 0, volumes: 0 };
    g[field]++;
    groups.set(project, g);
  };
  try {
    const bounded = boundedBy(answerSec);
    for (const c of await bounded("the list of Berth's group containers", (abortSignal) => docker.listContainers({ all: true, filters, abortSignal }))) note(c.Labels, 'containers');
    for (const n of await bounded("the list of Berth's group networks", (abortSignal) => docker.listNetworks({ filters, abortSignal }))) note(n.Labels, 'networks');
    for (const v of (await bounded("the list of Berth's group volumes", (abortSignal) => docker.listVolumes({ filters, abortSignal }))).Volumes ?? []) note(v.Labels ?? undefined, 'volumes');
  } catch (err) {
    throw asSandboxError(ENGINE, err);
  }
  return [...groups.values()];
}

/** Stops every container of the group (kept for artifacts; removal is removeGroup). */
export async function stopGroup(docker: Docker, group: GroupHandle, services: string[] = Object.keys(group.services)): Promise<void> {
  await Promise.all(services.flatMap((s) => (group.services[s] ? [stopSandbox(docker, group.services[s])] : [])));
}

/** Starts stopped containers of the group again; running ones are left alone. */
export async function startGroup(docker: Docker, group: GroupHandle, services: string[] = Object.keys(group.services)): Promise<void> {
  await Promise.all(services.flatMap((s) => (group.services[s] ? [resumeSandbox(docker, group.services[s])] : [])));
}
