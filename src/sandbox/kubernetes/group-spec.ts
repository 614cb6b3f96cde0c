// Pure rules of a Compose group on Kubernetes: the whole group is ONE pod, each service a container of it.
//
// Why one pod and not a pod per service: the local cluster (and many others) has no cluster DNS and no kube-proxy,
// and Compose's named volumes are shared between services. In one pod every service name is 127.0.0.1 (hostAliases:
// the services share one network namespace, as on Compose's network, without DNS or Services), a named volume is an
// emptyDir every container that mounts it shares (no ReadWriteMany storage needed; the loader puts in the image's
// files Docker would copy into a new volume: volumePrefills), and removing the group is deleting one pod. The price: two services cannot listen on one port (refused when their `expose` says so), resources are
// per container, and a service the others depend on restarts when it exits (a Kubernetes sidecar).
//
// depends_on order is Kubernetes' own init-container order: main and what it depends on first (topologically), then
// the services that depend on something else; each is an init container, a one-shot (the target of a
// service_completed_successfully) a plain one that must exit 0 before the next starts, any other a restartable
// (sidecar) one whose startupProbe (its healthcheck) holds the next back until it passes. main's startupProbe waits
// for the driver's gate, written once Berth has seeded main (and main's own healthcheck), as Docker starts main's
// dependents only after the seed. Services nothing depends on are the pod's regular containers (they may exit, as
// with Compose's `restart: "no"`), beside a holder that keeps the pod alive while they do.
import type { V1Container, V1Pod, V1Probe, V1Volume, V1VolumeMount } from '@kubernetes/client-node';
import { createHash } from 'node:crypto';
import { posix } from 'node:path';
import type { ComposeModel, ComposeService } from '../compose/model.ts';
import { MAIN_SERVICE, mainAndItsDependencies } from '../compose/model.ts';
import type { GroupMainSpec } from '../driver.ts';
import type { ImageConfig } from '../image-config.ts';
import { SANDBOX_LAYOUT } from '../../task/layout.ts';
import type { SandboxLabels } from '../types.ts';
import { CONTAINER, podBase } from './pod-spec.ts';

/** On a group's pod: the Compose project it stands for. */
export const ANNOTATION_GROUP = 'berth.group';
/** On a group's pod: service → its container, user and working directory (JSON), for a handle made later. */
export const ANNOTATION_SERVICES = 'berth.services';
/** The container that keeps a group's pod alive while services nothing depends on exit. */
export const HOLDER = 'berth-hold';
/** The init container the task's bind-mounted files are uploaded through before any service starts. */
export const LOADER = 'berth-binds';
/** Where the loader sees the bind volumes, and the file that lets it finish. */
export const LOADER_ROOT = '/berth-binds';
export const LOADER_DONE = '/.berth-binds-loaded';
/** Written in main by the driver once main is seeded: main's startupProbe waits for it (its dependents wait for main). */
export const MAIN_GATE = `${SANDBOX_LAYOUT.logsDir}/.berth-group-started`;

/** A Compose feature the Kubernetes group cannot honour, with the key that names it and the fix. */
export interface GroupRefusal {
  readonly key: string;
  readonly problem: string;
  readonly fix: string;
}

/** Keys of a resolved service the pod honours (mapped below). */
const SUPPORTED = new Set([
  'image', 'build', 'command', 'entrypoint', 'environment', 'depends_on', 'healthcheck', 'volumes', 'networks', 'working_dir',
  'user', 'deploy', 'cpus', 'mem_limit', 'expose', 'extra_hosts', 'cap_add', 'cap_drop', 'read_only', 'tmpfs', 'links',
]);
/** Keys that change nothing in a pod (their effect is the engine's or Compose's own bookkeeping). */
const NO_EFFECT = new Set([
  'labels', 'logging', 'init', 'stop_signal', 'stop_grace_period', 'tty', 'stdin_open', 'platform', 'pull_policy', 'restart',
  'memswap_limit', 'env_file', 'profiles',
]);
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
const HOSTNAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

const DURATION_UNITS: Record<string, number> = { h: 3600, m: 60, s: 1, ms: 0.001, us: 1e-6, ns: 1e-9 };

/** A Compose duration (`1m30s`, `500ms`, `2s`, or a number of seconds) in seconds; undefined when absent. */
export function durationSec(value: unknown): number | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value === 'number') return value;
  let total = 0;
  const text = String(value).trim();
  const re = /(\d+(?:\.\d+)?)(h|ms|us|ns|m|s)/g;
  let seen = 0;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    total += Number(m[1]) * DURATION_UNITS[m[2]!]!;
    seen += m[0].length;
  }
  if (seen !== text.length) throw new Error(`"${text}" is not a Compose duration (for example 30s, 1m30s or 500ms)`);
  return total;
}

/** A service's healthcheck as a probe command and timings, or null for none (`disable`, `NONE`). */
export interface Health {
  readonly command: string[];
  readonly intervalSec: number;
  readonly timeoutSec: number;
  readonly retries: number;
  readonly startPeriodSec: number;
}

/** The service's own healthcheck, else its image's (as Docker runs an image's HEALTHCHECK), else null. Compose's defaults: 30 s, 30 s, 3. */
export function healthOf(s: ComposeService, image: ImageConfig | null | undefined): Health | null {
  const hc = s.healthcheck as { test?: string[] | string; interval?: string; timeout?: string; retries?: number; start_period?: string; disable?: boolean } | undefined;
  if (hc?.disable === true) return null;
  const test = hc?.test === undefined ? undefined : Array.isArray(hc.test) ? hc.test : ['CMD-SHELL', hc.test];
  if (test?.[0] === 'NONE') return null;
  let command: string[] | undefined;
  if (test?.[0] === 'CMD') command = test.slice(1);
  else if (test?.[0] === 'CMD-SHELL') command = ['/bin/sh', '-c', test.slice(1).join(' ')];
  const fromImage = image?.healthcheck ?? null;
  if (!command) {
    if (!fromImage) return null;
    command = ['/bin/sh', '-c', fromImage.command];
  }
  return {
    command,
    intervalSec: durationSec(hc?.interval) ?? fromImage?.intervalSec ?? 30,
    timeoutSec: durationSec(hc?.timeout) ?? fromImage?.timeoutSec ?? 30,
    retries: hc?.retries ?? fromImage?.retries ?? 3,
    startPeriodSec: durationSec(hc?.start_period) ?? fromImage?.startPeriodSec ?? 0,
  };
}

/**
 * A startup probe that fails the service as Compose's healthcheck would (unhealthy after start_period and `retries`
 * intervals), probing every second so a healthy service is seen at once.
 */
export function startupProbe(h: Health): V1Probe {
  const budget = h.startPeriodSec + Math.max(1, h.retries) * Math.max(1, h.intervalSec);
  return { exec: { command: [...h.command] }, periodSeconds: 1, timeoutSeconds: Math.max(1, Math.ceil(h.timeoutSec)), failureThreshold: Math.max(1, Math.ceil(budget)) };
}

/** Service names in start order and what each one is in the pod. */
export interface GroupOrder {
  /** Init containers, in order (main among them). */
  readonly init: readonly string[];
  /** Services some other one needs to complete successfully: plain init containers that must exit 0. */
  readonly oneShots: readonly string[];
  /** Services nothing depends on (main aside): regular containers. */
  readonly leaves: readonly string[];
}

const depsOf = (m: ComposeModel, s: string) => Object.keys(m.services[s]?.depends_on ?? {}).filter((d) => d in m.services);

/** Topological order of `names` (a name's dependencies first; ties by name, so the pod is the same each time). */
function topological(m: ComposeModel, names: readonly string[], placed: Set<string>): string[] {
  const out: string[] = [];
  const want = new Set(names);
  const visit = (n: string, path: string[]) => {
    if (placed.has(n) || !want.has(n)) return;
    if (path.includes(n)) throw new Error(`depends_on cycle: ${[...path, n].join(' -> ')}`);
    for (const d of [...depsOf(m, n)].sort()) visit(d, [...path, n]);
    if (placed.has(n)) return;
    placed.add(n);
    out.push(n);
  };
  for (const n of [...names].sort()) visit(n, []);
  return out;
}

export function groupOrder(m: ComposeModel): GroupOrder {
  const names = Object.keys(m.services);
  const dependedOn = new Set(names.flatMap((n) => depsOf(m, n)));
  const oneShots = new Set(names.flatMap((n) => Object.entries(m.services[n]!.depends_on ?? {})
    .filter(([d, c]) => d in m.services && c.condition === 'service_completed_successfully').map(([d]) => d)));
  const leaves = names.filter((n) => n !== MAIN_SERVICE && !dependedOn.has(n)).sort();
  const inInit = names.filter((n) => n === MAIN_SERVICE || dependedOn.has(n));
  const first = new Set(mainAndItsDependencies(m));
  const placed = new Set<string>();
  const init = [...topological(m, inInit.filter((n) => first.has(n)), placed), ...topological(m, inInit.filter((n) => !first.has(n)), placed)];
  return { init, oneShots: init.filter((n) => oneShots.has(n)), leaves };
}

/** The container of a service: its name when that is a DNS label Berth does not use itself, else a cleaned name with a hash. */
export function containerName(service: string): string {
  if (service === MAIN_SERVICE) return CONTAINER;
  if (DNS_LABEL.test(service) && service !== HOLDER && service !== LOADER && service !== CONTAINER) return service;
  const hash = createHash('sha256').update(service).digest('hex').slice(0, 8);
  const readable = service.toLowerCase().replace(/[^a-z0-9-]+/g, '-').replace(/^-+/, '').slice(0, 50).replace(/-+$/, '');
  return `${readable || 's'}-${hash}`;
}

interface ComposeVolume {
  type?: string;
  source?: string;
  target?: string;
  read_only?: boolean;
  volume?: { subpath?: string; nocopy?: boolean };
  tmpfs?: { size?: number | string };
}

const volumesOf = (s: ComposeService) => (s.volumes as ComposeVolume[] | undefined) ?? [];

/**
 * Every refusal of the resolved model (empty: the pod below runs it). `taskDir` is the folder bind mounts may come
 * from; `images` the sidecars' configurations, without which what they decide (an image's HEALTHCHECK, its CMD) is not judged.
 */
export function groupRefusals(m: ComposeModel, taskDir: string, images?: Readonly<Record<string, ImageConfig | null>>): GroupRefusal[] {
  const out: GroupRefusal[] = [];
  const refuse = (key: string, problem: string, fix: string) => out.push({ key, problem, fix });
  const ports = new Map<string, string>();
  const networks = new Map<string, Set<string>>();
  for (const [name, s] of Object.entries(m.services)) {
    const key = (k: string) => `services.${name}.${k}`;
    for (const k of Object.keys(s)) {
      if (!SUPPORTED.has(k) && !NO_EFFECT.has(k)) refuse(key(k), `the Kubernetes sandbox runs a group as one pod and has no counterpart for ${k}`, `remove ${k}, or run the task with --sandbox docker`);
    }
    if (!HOSTNAME.test(name.toLowerCase())) refuse(`services.${name}`, `the service name "${name}" is not a host name, and services reach each other by name`, 'rename the service with letters, digits and "-" only');
    if (s.user !== undefined && s.user !== null && s.user !== '' && name !== MAIN_SERVICE && !/^\d+(:\d+)?$/.test(String(s.user))) {
      refuse(key('user'), `user "${s.user}" is a name; a pod's container runs as a numeric uid`, 'give the uid (and gid) as numbers, for example "1000:1000", or set USER in the service\'s image');
    }
    if (images && Array.isArray(s.entrypoint) && s.entrypoint.length === 0 && name !== MAIN_SERVICE && !(s.command?.length) && !images[name]?.cmd?.length) {
      refuse(key('entrypoint'), 'an empty entrypoint with no command leaves the container nothing to run', 'give the service a command');
    }
    for (const e of (s.expose as Array<string | number> | undefined) ?? []) {
      const port = String(e).replace(/\/.*$/, '');
      const other = ports.get(port);
      if (other !== undefined) refuse(key('expose'), `port ${port} is exposed by "${other}" too; the services of a pod share one network namespace`, 'give each service its own port');
      else ports.set(port, name);
    }
    networks.set(name, new Set(Object.keys((s.networks as Record<string, unknown> | null | undefined) ?? { default: null })));
    volumesOf(s).forEach((v, i) => {
      const k = key(`volumes[${i}]`);
      if (v.type === 'bind') {
        const rel = posix.relative(taskDir, v.source ?? '');
        if (!v.source || rel.startsWith('..') || posix.isAbsolute(rel)) refuse(k, `bind mount ${v.source} is outside the task folder (${taskDir}), which is all the worker copies into the pod`, 'mount a folder of the task');
      } else if (v.type !== 'volume' && v.type !== 'tmpfs') {
        refuse(k, `a ${v.type} mount has no counterpart in a pod`, 'use a named volume or a folder of the task');
      }
    });
    for (const [dep, c] of Object.entries(s.depends_on ?? {})) {
      if (images && c.condition === 'service_healthy' && m.services[dep] && !healthOf(m.services[dep], images[dep])) {
        refuse(key(`depends_on.${dep}`), `"${dep}" has no healthcheck, so it can never be healthy`, `give "${dep}" a healthcheck, or wait for condition: service_started`);
      }
    }
  }
  // One network namespace: every service reaches every other, so services Compose would keep apart cannot be.
  const names = [...networks.keys()];
  for (const a of names) {
    for (const b of names) {
      if (a < b && ![...networks.get(a)!].some((n) => networks.get(b)!.has(n))) {
        refuse(`services.${b}.networks`, `"${a}" and "${b}" share no network, but the services of a pod all reach each other`, 'put them on a common network, or run the task with --sandbox docker');
      }
    }
  }
  return out;
}

/** The refusal message of a group the Kubernetes sandbox cannot run. */
export function refusalMessage(file: string, refusals: readonly GroupRefusal[]): string {
  return `${file}: the Kubernetes sandbox cannot run this Compose group: ${refusals.map((r) => `${r.key}: ${r.problem} (fix: ${r.fix})`).join('; ')}`;
}

/** A bind-mounted path of the task, copied into an emptyDir of the pod through the loader. */
export interface BindSource {
  readonly volume: string;
  /** Absolute, on the worker. */
  readonly source: string;
  /** Where the loader sees the volume. */
  readonly loaderDir: string;
}

export interface GroupPodInput {
  readonly podName: string;
  readonly project: string;
  readonly labels: SandboxLabels;
  readonly model: ComposeModel;
  /** Sidecar → the image reference its container pulls. */
  readonly images: Readonly<Record<string, string>>;
  /** Sidecar → its image's configuration (for its healthcheck, user and working directory), when the registry has it. */
  readonly imageConfigs: Readonly<Record<string, ImageConfig | null>>;
  readonly main: GroupMainSpec;
  readonly sidecarEnv?: Readonly<Record<string, string>>;
  /** Which bind sources are files (mounted by subPath) rather than folders. */
  readonly isFile: (source: string) => boolean;
  /** The pod volumes (volumePrefills' keys) the loader fills from an image before any service starts. */
  readonly prefilled?: ReadonlySet<string>;
}

export interface ServiceEntry {
  readonly container: string;
  readonly user: string;
  readonly workdir: string;
}

export interface GroupPod {
  readonly pod: V1Pod;
  readonly order: GroupOrder;
  readonly services: Readonly<Record<string, ServiceEntry>>;
  readonly binds: readonly BindSource[];
  /** The volumes the loader fills from an image, and where it sees each. */
  readonly prefills: ReadonlyArray<{ readonly volume: string; readonly loaderDir: string }>;
}

function resources(s: ComposeService, main?: GroupMainSpec): V1Container['resources'] {
  const limits: Record<string, string> = {};
  const lim = s.deploy?.resources?.limits;
  const cpus = main?.cpus ?? (lim?.cpus !== undefined ? Number(lim.cpus) : s.cpus !== undefined ? Number(s.cpus) : undefined);
  const memBytes = main?.memoryMb !== undefined ? main.memoryMb * 1024 * 1024 : lim?.memory !== undefined ? Number(lim.memory) : s.mem_limit !== undefined ? Number(s.mem_limit) : undefined;
  if (cpus !== undefined && cpus > 0) limits.cpu = `${Math.max(1, Math.round(cpus * 1000))}m`;
  if (memBytes !== undefined && memBytes > 0) limits.memory = String(Math.round(memBytes));
  return Object.keys(limits).length > 0 ? { limits, requests: limits } : undefined;
}

function envOf(s: ComposeService, over: Readonly<Record<string, string>>): Array<{ name: string; value: string }> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(s.environment ?? {})) if (v !== null && v !== undefined) env[k] = String(v);
  Object.assign(env, over);
  return Object.entries(env).map(([name, value]) => ({ name, value }));
}

/** Docker's rule, in Kubernetes' terms: an entrypoint replaces the image's and drops its CMD; a command alone keeps the image's entrypoint. */
function launch(s: ComposeService, image: ImageConfig | null | undefined): Pick<V1Container, 'command' | 'args'> {
  const entrypoint = s.entrypoint ?? null;
  const command = s.command ?? null;
  if (entrypoint !== null && entrypoint.length === 0) return { command: [...(command ?? image?.cmd ?? [])], args: [] };
  if (entrypoint !== null) return { command: [...entrypoint], args: [...(command ?? [])] };
  return command !== null ? { args: [...command] } : {};
}

function securityOf(s: ComposeService, root: boolean): V1Container['securityContext'] {
  const ctx: NonNullable<V1Container['securityContext']> = {};
  if (root) {
    ctx.runAsUser = 0;
    ctx.runAsGroup = 0;
  } else if (s.user !== undefined && s.user !== null && s.user !== '') {
    const [uid, gid] = String(s.user).split(':');
    ctx.runAsUser = Number(uid);
    if (gid !== undefined) ctx.runAsGroup = Number(gid);
  }
  const add = (s.cap_add as string[] | undefined)?.map((c) => c.toUpperCase().replace(/^CAP_/, ''));
  const drop = (s.cap_drop as string[] | undefined)?.map((c) => c.toUpperCase().replace(/^CAP_/, ''));
  if (add?.length || drop?.length) ctx.capabilities = { ...(add?.length ? { add } : {}), ...(drop?.length ? { drop } : {}) };
  if (s.read_only === true) ctx.readOnlyRootFilesystem = true;
  return Object.keys(ctx).length > 0 ? ctx : undefined;
}

const volumeName = (prefix: string, key: string) => `${prefix}-${createHash('sha256').update(key).digest('hex').slice(0, 10)}`;
/** The pod volume of a service's named (or anonymous) Compose volume: one per name, shared by every service mounting it. */
const composeVolumeName = (service: string, i: number, v: ComposeVolume) => (v.source ? volumeName('vol', v.source) : volumeName('anon', `${service}\0${i}`));

/** Where a volume of the pod may take its first files from: a service that mounts it, and where. */
export interface VolumePrefill {
  readonly service: string;
  readonly target: string;
}

/**
 * Docker fills a new named or anonymous volume with what the image of the first container mounting it has at the
 * mount point (not with `volume.nocopy`, nor for a subpath). A pod's emptyDir starts empty, so the driver loads those
 * files through the loader. Per pod volume, the services that may fill it in the order Compose starts them.
 */
export function volumePrefills(m: ComposeModel): Map<string, VolumePrefill[]> {
  const order = groupOrder(m);
  const out = new Map<string, VolumePrefill[]>();
  for (const service of [...order.init, ...order.leaves]) {
    volumesOf(m.services[service]!).forEach((v, i) => {
      if (v.type !== 'volume' || !v.target || v.volume?.nocopy === true || v.volume?.subpath) return;
      const vol = composeVolumeName(service, i, v);
      out.set(vol, [...(out.get(vol) ?? []), { service, target: v.target }]);
    });
  }
  return out;
}

/** The pod of a group (see the file's head for the mapping). */
export function groupPod(input: GroupPodInput): GroupPod {
  const { model } = input;
  const order = groupOrder(model);
  const volumes = new Map<string, V1Volume>();
  const binds = new Map<string, BindSource>();
  const services: Record<string, ServiceEntry> = {};

  const mountsOf = (name: string, s: ComposeService): V1VolumeMount[] => {
    const mounts: V1VolumeMount[] = [];
    volumesOf(s).forEach((v, i) => {
      const target = v.target!;
      const readOnly = v.read_only === true ? { readOnly: true } : {};
      if (v.type === 'bind') {
        const vol = volumeName('bind', v.source!);
        if (!binds.has(v.source!)) binds.set(v.source!, { volume: vol, source: v.source!, loaderDir: `${LOADER_ROOT}/${vol}` });
        volumes.set(vol, { name: vol, emptyDir: {} });
        mounts.push({ name: vol, mountPath: target, ...(input.isFile(v.source!) ? { subPath: posix.basename(v.source!) } : {}), ...readOnly });
      } else if (v.type === 'tmpfs') {
        const vol = volumeName('tmpfs', `${name}\0${i}`);
        const size = v.tmpfs?.size;
        volumes.set(vol, { name: vol, emptyDir: { medium: 'Memory', ...(size !== undefined ? { sizeLimit: String(size) } : {}) } });
        mounts.push({ name: vol, mountPath: target });
      } else {
        // A named volume is one emptyDir for every service that mounts it; an anonymous one is this service's own.
        const vol = composeVolumeName(name, i, v);
        volumes.set(vol, { name: vol, emptyDir: {} });
        mounts.push({ name: vol, mountPath: target, ...(v.volume?.subpath ? { subPath: v.volume.subpath } : {}), ...readOnly });
      }
    });
    for (const [i, t] of ((typeof s.tmpfs === 'string' ? [s.tmpfs] : (s.tmpfs as string[] | undefined)) ?? []).entries()) {
      const vol = volumeName('tmpfs', `${name}\0key\0${i}`);
      volumes.set(vol, { name: vol, emptyDir: { medium: 'Memory' } });
      mounts.push({ name: vol, mountPath: t.replace(/:.*$/, '') });
    }
    return mounts;
  };

  const containerOf = (name: string): V1Container => {
    const s = model.services[name]!;
    const container = containerName(name);
    if (name === MAIN_SERVICE) {
      const m = input.main;
      services[name] = { container, user: m.user, workdir: m.workdir };
      const health = s.healthcheck ? healthOf(s, null) : null;
      // The gate first, then main's own healthcheck: main's dependents start once Berth has seeded main and it is healthy.
      const probe: V1Probe = {
        exec: { command: ['/bin/sh', '-c', 'test -e "$0" && exec "$@"', MAIN_GATE, ...(health?.command ?? [])] },
        periodSeconds: 1, timeoutSeconds: Math.max(1, Math.ceil(health?.timeoutSec ?? 5)), failureThreshold: 1_000_000,
      };
      return {
        name: container, image: m.image, imagePullPolicy: 'IfNotPresent', command: [...m.keepAlive], args: [],
        env: envOf(s, m.env), securityContext: securityOf(s, true), resources: resources(s, m), volumeMounts: mountsOf(name, s),
        ...(s.working_dir ? { workingDir: String(s.working_dir) } : {}), restartPolicy: 'Always', startupProbe: probe,
      };
    }
    const config = input.imageConfigs[name] ?? null;
    const numeric = s.user !== undefined && s.user !== null && s.user !== '' ? String(s.user) : null;
    services[name] = { container, user: numeric ?? config?.user ?? '0', workdir: (s.working_dir as string | undefined) ?? config?.workdir ?? '/' };
    const health = healthOf(s, config);
    const init = order.init.includes(name);
    const oneShot = order.oneShots.includes(name);
    return {
      name: container, image: input.images[name] ?? s.image!, imagePullPolicy: 'IfNotPresent', ...launch(s, config),
      env: envOf(s, input.sidecarEnv ?? {}), securityContext: securityOf(s, false), resources: resources(s), volumeMounts: mountsOf(name, s),
      ...(s.working_dir ? { workingDir: String(s.working_dir) } : {}),
      ...(init && !oneShot ? { restartPolicy: 'Always' } : {}),
      ...(health && init && !oneShot ? { startupProbe: startupProbe(health) } : {}),
      // A regular container's health is readiness: the driver waits for it, nothing restarts it.
      ...(health && !init ? { readinessProbe: { ...startupProbe(health), failureThreshold: 1 } } : {}),
    };
  };

  const initContainers = order.init.map(containerOf);
  const leaves = order.leaves.map(containerOf);
  const holder: V1Container = {
    name: HOLDER, image: input.main.image, imagePullPolicy: 'IfNotPresent', command: ['sleep', 'infinity'], args: [],
    securityContext: { runAsUser: 0, runAsGroup: 0 }, resources: { limits: { cpu: '10m', memory: '16Mi' }, requests: { cpu: '10m', memory: '16Mi' } },
  };
  const bindList = [...binds.values()];
  const prefills = [...(input.prefilled ?? [])].filter((v) => volumes.has(v)).sort().map((volume) => ({ volume, loaderDir: `${LOADER_ROOT}/${volume}` }));
  if (bindList.length > 0 || prefills.length > 0) {
    initContainers.unshift({
      name: LOADER, image: input.main.image, imagePullPolicy: 'IfNotPresent',
      command: ['/bin/sh', '-c', `until [ -e ${LOADER_DONE} ]; do sleep 0.1; done`], args: [],
      securityContext: { runAsUser: 0, runAsGroup: 0 },
      volumeMounts: [...bindList, ...prefills].map((b) => ({ name: b.volume, mountPath: b.loaderDir })),
    });
  }
  const hostnames = new Set<string>();
  const extra = new Map<string, Set<string>>();
  for (const [name, s] of Object.entries(model.services)) {
    hostnames.add(name.toLowerCase());
    for (const n of Object.values((s.networks as Record<string, { aliases?: string[] } | null> | null | undefined) ?? {})) for (const a of n?.aliases ?? []) hostnames.add(a.toLowerCase());
    for (const l of (s.links as string[] | undefined) ?? []) hostnames.add((l.split(':')[1] ?? l).toLowerCase());
    for (const e of (s.extra_hosts as string[] | undefined) ?? []) {
      const [host, ip] = e.includes('=') ? e.split('=') : [e.slice(0, e.indexOf(':')), e.slice(e.indexOf(':') + 1)];
      if (host && ip) extra.set(ip, (extra.get(ip) ?? new Set()).add(host));
    }
  }
  const mainEntry = services[MAIN_SERVICE]!;
  const base = podBase({
    podName: input.podName, kind: 'group', name: input.project, labels: input.labels, user: mainEntry.user, workdir: mainEntry.workdir,
    annotations: { [ANNOTATION_GROUP]: input.project, [ANNOTATION_SERVICES]: JSON.stringify(services) },
  });
  return {
    order, services, binds: bindList, prefills,
    pod: {
      metadata: base.metadata,
      spec: {
        ...base.spec,
        hostAliases: [{ ip: '127.0.0.1', hostnames: [...hostnames].sort() }, ...[...extra].map(([ip, hosts]) => ({ ip, hostnames: [...hosts] }))],
        volumes: [...volumes.values()],
        initContainers,
        containers: [holder, ...leaves],
      },
    },
  };
}
