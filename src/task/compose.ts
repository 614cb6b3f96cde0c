// environment/docker-compose.yaml at load: the services a Compose task declares, and the refusal of
// every key Berth cannot honour safely on a shared host (docs/design.md section 7, Compose groups). Pure:
// interpolation and merging over Berth's `main` are Compose's own work at seed.
import { posix } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { refuse } from './errors.ts';
import { applyImageAlias } from './image-alias.ts';

export const MAIN = 'main';

export interface ComposeSidecar {
  readonly name: string;
  /** `image:` after image aliases (a `${VAR}` in it is left for Compose), or null for a built service. */
  readonly image: string | null;
  /** A build section, its context relative to the task folder. */
  readonly build: { readonly context: string; readonly dockerfile: string } | null;
  /** Sized with deploy.resources.limits (or cpus / mem_limit); else it runs at the engine's default size. */
  readonly sized: boolean;
}

export interface ComposePlan {
  /** Relative to the task folder: the file Compose reads. */
  readonly file: string;
  /** Every service, main first. */
  readonly services: readonly string[];
  readonly sidecars: readonly ComposeSidecar[];
  /** main's `network_mode: none`: main runs on no network at all, the sidecars on the group's. */
  readonly main_offline: boolean;
}

type Table = Record<string, unknown>;

function isTable(v: unknown): v is Table {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * Capabilities that reach the host (or every other container on it): mounts and namespaces (SYS_ADMIN), kernel
 * modules, raw devices, the host's clock, boot and kernel log, LSM policy, eBPF and perf, and open_by_handle_at
 * (DAC_READ_SEARCH, the "shocker" escape). SYS_PTRACE is not among them: a container's own pid namespace bounds it.
 */
const HOST_CAPABILITIES = new Set([
  'ALL', 'SYS_ADMIN', 'SYS_MODULE', 'SYS_RAWIO', 'SYS_BOOT', 'SYS_TIME', 'MAC_ADMIN', 'MAC_OVERRIDE', 'DAC_READ_SEARCH',
  'SYSLOG', 'BPF', 'PERFMON',
]);
/** Service keys that share a host namespace when set to `host`. */
const HOST_NAMESPACES = ['pid', 'ipc', 'uts', 'userns_mode', 'cgroup'] as const;
/** Build keys Berth's own build honours (it builds every sidecar, with image aliases in FROM). */
const BUILD_KEYS = new Set(['context', 'dockerfile', 'args', 'labels', 'cache_from', 'pull', 'no_cache']);
/** Keys of main that Berth sets itself, each but for the value Harbor's own `main` gives it (harborsOwnMain). */
const MAIN_OWNED: Record<string, string> = {
  image: 'main runs the image of [environment].docker_image or environment/Dockerfile: set those instead',
  build: 'main is built from environment/Dockerfile: put the build there',
  network_mode: 'set [environment].network_mode ("public" or "no-network") instead, or network_mode: "none" for a main with no network at all',
};

/** `${NAME}` or `$NAME`, exactly: one of Harbor's compose variables (compose-variables.ts). */
export const isHarborVariable = (v: unknown, name: string): boolean => v === `\${${name}}` || v === `$${name}`;

/**
 * Whether main's `key` says what Harbor's own `main` already says (its build and prebuilt templates, and the `main` its
 * Terminal-Bench mapper writes into every Compose task): its image variables, a build of the environment folder, or
 * `network_mode: none` (how a Compose task air-gaps main on Harbor's Docker environment). Those lines change nothing
 * there, and Berth gives the variables its own values (compose-variables.ts).
 */
function harborsOwnMain(key: string, value: unknown): boolean {
  if (key === 'image') return isHarborVariable(value, 'MAIN_IMAGE_NAME') || isHarborVariable(value, 'PREBUILT_IMAGE_NAME');
  if (key === 'network_mode') return value === 'none';
  if (key !== 'build') return false;
  const b = typeof value === 'string' ? { context: value } : isTable(value) ? value : null;
  if (b === null || Object.keys(b).some((k) => k !== 'context')) return false;
  return isHarborVariable(b.context, 'CONTEXT_DIR') || (typeof b.context === 'string' && posix.normalize(b.context).replace(/\/$/, '') === '.');
}

/** Harbor's host folders of main's logs (set when it bind-mounts them): Berth keeps those folders inside main. */
const HARBOR_HOST_LOG_PATHS = /\$\{?HOST_(AGENT_LOGS|VERIFIER_LOGS|ARTIFACTS)_PATH\b/;

/**
 * Why Berth cannot honour a service's `pull_policy` (null: it can). An image is taken from the engine and pulled only
 * when missing (`missing`, `if_not_present`), looked up without a pull (`never`), or built (`build`, with a build
 * section); a policy that pulls again whatever the engine has would bypass image aliases on an air-gapped host.
 */
export function pullPolicyProblem(policy: string, hasBuild: boolean): string | null {
  if (['missing', 'if_not_present', 'never'].includes(policy)) return null;
  if (policy === 'build') return hasBuild ? null : 'pull_policy build needs a build section';
  if (['always', 'daily', 'weekly'].includes(policy) || /^every_/.test(policy)) {
    return `pull_policy ${policy} pulls again what the engine already has, which Berth does not do (images come through aliases and are pulled only when missing); set pull_policy to missing or never, or remove it`;
  }
  return `${policy} is not a Compose pull_policy (always, never, missing, build, daily, weekly, every_<duration>)`;
}

function truthy(v: unknown): boolean {
  return v === true || (typeof v === 'string' && /^(true|yes|on|1)$/i.test(v.trim()));
}

interface Ctx {
  file: string;
  /** Task-folder-relative folder the compose file's relative paths resolve against. */
  base: string;
}

function fail(ctx: Ctx, key: string, value: unknown, problem: string, fix: string): never {
  return refuse({ code: 'compose_unsupported', file: ctx.file, key, value, problem, fix });
}

/** A host path the file names, relative to the task folder; refused when it leaves the folder. */
function inTaskFolder(ctx: Ctx, key: string, path: string, what: string): string {
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(path) || path.startsWith('git@')) {
    fail(ctx, key, path, `a remote ${what} is not read`, `put the ${what} in the task folder and name it with a relative path`);
  }
  if (path.startsWith('/') || path.startsWith('~')) {
    fail(ctx, key, path, `${what} ${path} is a path on the host, outside the task folder`, `put it in the task folder and name it relative to environment/, for example ./${posix.basename(path)}`);
  }
  if (path.includes('$')) return path; // Compose interpolates it at seed.
  const rel = posix.normalize(posix.join(ctx.base, path));
  if (rel === '..' || rel.startsWith('../')) {
    fail(ctx, key, path, `${what} ${path} is outside the task folder`, 'keep every file the task needs inside its folder');
  }
  return rel;
}

function checkVolumes(ctx: Ctx, key: string, volumes: unknown, namedVolumes: ReadonlySet<string>, service: string): void {
  if (!Array.isArray(volumes)) return;
  volumes.forEach((v, i) => {
    const k = `${key}[${i}]`;
    let source: string | undefined;
    let type: string | undefined;
    if (typeof v === 'string') {
      source = v.match(/^(\$\{[^}]*\}|[^:])*/)![0];
      if (source.length === v.length) return; // an anonymous volume
      type = source && (source.startsWith('.') || source.startsWith('/') || source.startsWith('~')) ? 'bind' : 'volume';
    } else if (isTable(v)) {
      type = typeof v.type === 'string' ? v.type : 'volume';
      source = typeof v.source === 'string' ? v.source : undefined;
    }
    // main's own (Harbor's templates restated) are replaced by the folders Berth keeps in main (compose-model.ts).
    if (service !== MAIN && source !== undefined && HARBOR_HOST_LOG_PATHS.test(source)) {
      fail(ctx, k, source, 'a sidecar sharing main\'s log folders through the host is not run: Berth keeps /logs/agent, /logs/verifier and /logs/artifacts inside main, never on the host', 'collect what the sidecar writes with an artifact (service = the sidecar) or a [[verifier.collect]] hook');
    }
    if (type === 'bind' && source !== undefined) inTaskFolder(ctx, k, source, 'a bind mount');
    if (type === 'volume' && source && !namedVolumes.has(source) && !source.includes('$')) {
      fail(ctx, k, source, `volume "${source}" is not declared under the top-level volumes`, `declare it (volumes: { ${source}: {} }) or mount a folder of the task with ./${source}`);
    }
  });
}

function checkService(ctx: Ctx, name: string, s: Table, namedVolumes: ReadonlySet<string>): void {
  const key = (k: string) => `services.${name}.${k}`;
  if (name === MAIN) {
    for (const [k, fix] of Object.entries(MAIN_OWNED)) {
      if (k in s && !harborsOwnMain(k, s[k])) fail(ctx, key(k), s[k], `Berth sets main's ${k} itself`, fix);
    }
  }
  if (truthy(s.privileged)) {
    fail(ctx, key('privileged'), s.privileged, 'a privileged container can reach the host and every other episode on it', 'remove privileged; grant only the capability the service needs with cap_add (for example NET_ADMIN)');
  }
  const mode = s.network_mode;
  if (typeof mode === 'string' && (mode === 'host' || mode.startsWith('container:') || mode.startsWith('bridge'))) {
    fail(ctx, key('network_mode'), mode, 'the service would leave the group\'s own network', 'remove network_mode: services reach each other by their service names on the group\'s network');
  }
  if (Array.isArray(s.ports) ? s.ports.length > 0 : s.ports !== undefined) {
    fail(ctx, key('ports'), s.ports, 'published host ports collide between concurrent episodes', 'use expose (or nothing): services reach each other by name on the group\'s network');
  }
  for (const ns of HOST_NAMESPACES) {
    if (s[ns] === 'host') fail(ctx, key(ns), 'host', `the service would share the host's ${ns} namespace`, `remove ${ns}`);
  }
  if (Array.isArray(s.cap_add)) {
    for (const cap of s.cap_add) {
      const c = String(cap).toUpperCase().replace(/^CAP_/, '');
      if (HOST_CAPABILITIES.has(c)) fail(ctx, key('cap_add'), cap, `capability ${c} reaches beyond the container`, 'remove it; capabilities such as NET_ADMIN or NET_RAW are fine');
    }
  }
  // Without seccomp a container is still held by its capabilities and AppArmor/SELinux; without those it is not.
  if (Array.isArray(s.security_opt) && s.security_opt.some((o) => /(apparmor|systempaths)[:=]unconfined|label[:=]disable/i.test(String(o)))) {
    fail(ctx, key('security_opt'), s.security_opt, 'the service would run without the host\'s AppArmor or SELinux confinement', 'remove the apparmor/systempaths unconfined and label:disable entries (seccomp:unconfined is allowed)');
  }
  for (const k of ['devices', 'device_cgroup_rules', 'gpus']) {
    if (s[k] !== undefined) fail(ctx, key(k), s[k], 'host devices are not given to a sidecar', `remove ${k}`);
  }
  if (s.container_name !== undefined) {
    fail(ctx, key('container_name'), s.container_name, 'a fixed container name collides between concurrent episodes', 'remove container_name: other services reach this one by its service name');
  }
  const replicas = isTable(s.deploy) ? s.deploy.replicas : undefined;
  for (const [k, v] of [['scale', s.scale], ['deploy.replicas', replicas]] as const) {
    if (v !== undefined && Number(v) !== 1) fail(ctx, key(k), v, 'a service runs as exactly one container in a group', `remove ${k}`);
  }
  if (isTable(s.extends) && s.extends.file !== undefined) {
    fail(ctx, key('extends.file'), s.extends.file, 'a service extending one from another file is not read at load', 'copy the service\'s settings into this file');
  }
  if (s.pull_policy !== undefined && s.pull_policy !== null) {
    const problem = pullPolicyProblem(String(s.pull_policy), s.build !== undefined);
    if (problem) fail(ctx, key('pull_policy'), s.pull_policy, problem, 'remove pull_policy, or set it to missing or never');
  }
  checkVolumes(ctx, key('volumes'), s.volumes, namedVolumes, name);
  const envFiles = typeof s.env_file === 'string' ? [s.env_file] : Array.isArray(s.env_file) ? s.env_file : [];
  envFiles.forEach((f, i) => {
    const path = isTable(f) ? f.path : f;
    if (typeof path === 'string') inTaskFolder(ctx, `${key('env_file')}[${i}]`, path, 'an env_file');
  });
}

function readBuild(ctx: Ctx, name: string, build: unknown): ComposeSidecar['build'] {
  const key = `services.${name}.build`;
  const b: Table = typeof build === 'string' ? { context: build } : isTable(build) ? build : {};
  for (const k of Object.keys(b)) {
    if (!BUILD_KEYS.has(k)) fail(ctx, `${key}.${k}`, b[k], `Berth builds the service itself and does not honour build.${k}`, `build the service from a Dockerfile in the task folder with context, dockerfile and args only`);
  }
  const context = inTaskFolder(ctx, `${key}.context`, typeof b.context === 'string' ? b.context : '.', 'a build context');
  const dockerfile = typeof b.dockerfile === 'string' ? b.dockerfile : 'Dockerfile';
  if (dockerfile.startsWith('/') || posix.normalize(dockerfile).startsWith('..')) {
    fail(ctx, `${key}.dockerfile`, dockerfile, 'the Dockerfile lies outside its build context', 'place the Dockerfile inside the context and name it relative to it');
  }
  return { context, dockerfile };
}

function isSized(s: Table): boolean {
  const deploy = isTable(s.deploy) ? s.deploy : {};
  const resources = isTable(deploy.resources) ? deploy.resources : {};
  return isTable(resources.limits) || s.cpus !== undefined || s.mem_limit !== undefined;
}

function checkTopLevel(ctx: Ctx, doc: Table): Set<string> {
  if ('include' in doc) fail(ctx, 'include', doc.include, 'an included compose file is not read at load', 'copy the included services into this file');
  const named = new Set<string>();
  for (const kind of ['volumes', 'networks', 'secrets', 'configs'] as const) {
    const table = doc[kind];
    if (table === undefined || table === null) continue;
    if (!isTable(table)) fail(ctx, kind, table, `${kind} is not a mapping`, `write ${kind} as a mapping of names`);
    for (const [n, def] of Object.entries(table)) {
      if (kind === 'volumes') named.add(n);
      if (!isTable(def)) continue;
      if (truthy(def.external)) {
        fail(ctx, `${kind}.${n}.external`, def.external, `an external ${kind.slice(0, -1)} is shared with whatever else uses it, across episodes`, `remove external so each episode gets its own`);
      }
      if (kind === 'networks' && (def.driver === 'host' || def.driver === 'macvlan' || def.driver === 'ipvlan')) {
        fail(ctx, `networks.${n}.driver`, def.driver, 'the network would join the host\'s', 'remove the driver: each episode gets a bridge network of its own');
      }
      if ((kind === 'secrets' || kind === 'configs') && typeof def.file === 'string') inTaskFolder(ctx, `${kind}.${n}.file`, def.file, `a ${kind.slice(0, -1)} file`);
    }
  }
  return named;
}

/** Reads a task's compose file: its services, or a refusal naming the file, the key and the fix. */
export function readComposePlan(file: string, text: string, aliases: Readonly<Record<string, string>> | undefined): ComposePlan {
  const ctx: Ctx = { file, base: posix.dirname(file) };
  let doc: unknown;
  try {
    doc = parseYaml(text, { merge: true, prettyErrors: true });
  } catch (e) {
    fail(ctx, '', undefined, `not valid YAML (${String((e as Error).message).split('\n')[0]})`, 'correct the YAML syntax');
  }
  if (doc === null || doc === undefined) doc = {};
  if (!isTable(doc)) fail(ctx, '', doc, 'the file is not a mapping', 'write the file as a mapping with a services table');
  const services = doc.services ?? {};
  if (!isTable(services)) fail(ctx, 'services', services, 'services is not a mapping', 'write services as a mapping of service names');
  const named = checkTopLevel(ctx, doc);
  const sidecars: ComposeSidecar[] = [];
  for (const [name, def] of Object.entries(services)) {
    const s = isTable(def) ? def : {};
    if (def !== null && !isTable(def)) fail(ctx, `services.${name}`, def, 'a service is not a mapping', 'write the service as a mapping of its settings');
    checkService(ctx, name, s, named);
    if (name === MAIN) continue;
    const build = s.build !== undefined ? readBuild(ctx, name, s.build) : null;
    const image = typeof s.image === 'string' ? (s.image.includes('$') ? s.image : applyImageAlias(s.image, aliases)) : null;
    if (image === null && build === null) fail(ctx, `services.${name}`, undefined, 'the service has neither image nor build', 'give it an image or a build section');
    sidecars.push({ name, image: build === null ? image : null, build, sized: isSized(s) });
  }
  const main = services[MAIN];
  const offline = isTable(main) && main.network_mode === 'none';
  return { file, services: [MAIN, ...sidecars.map((s) => s.name)], sidecars, main_offline: offline };
}
