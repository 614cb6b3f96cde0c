// The project Berth hands to `docker compose up`: the model Compose itself resolved (`config --format
// json` over Berth's `main` and the task's file, so interpolation, `$$`, merging and relative paths are
// Compose's own), with what Berth owns laid over it. Pure.
import { SANDBOX_LAYOUT } from '../../task/layout.ts';

type Json = Record<string, unknown>;

export interface ComposeService extends Json {
  image?: string;
  build?: { context?: string; dockerfile?: string; args?: Record<string, string | null>; target?: string } & Json;
  entrypoint?: string[] | null;
  command?: string[] | null;
  environment?: Record<string, string | null>;
  labels?: Record<string, string>;
  networks?: Record<string, unknown> | null;
  depends_on?: Record<string, { condition?: string; required?: boolean }>;
  deploy?: { resources?: { limits?: { cpus?: string | number; memory?: string | number } } } & Json;
}

/** What `docker compose config --format json` prints. */
export interface ComposeModel extends Json {
  name?: string;
  services: Record<string, ComposeService>;
  networks?: Record<string, Json | null>;
  volumes?: Record<string, Json | null>;
}

export const MAIN_SERVICE = 'main';

/** Compose interpolates every value of the file it reads: a literal `$` of Berth's is written `$$`. */
export function escapeDollars(value: string): string {
  return value.replace(/\$/g, '$$$$');
}

function escapeAll(values: Readonly<Record<string, string>>): Record<string, string> {
  return Object.fromEntries(Object.entries(values).map(([k, v]) => [k, escapeDollars(v)]));
}

/** Berth's `main` before the task's file is laid over it (Harbor's build or prebuilt template, without its mounts). */
export function baseMainFile(image: string): ComposeModel {
  return { services: { [MAIN_SERVICE]: { image } } };
}

const PASSING_HEALTHCHECK = { test: ['CMD-SHELL', 'exit 0'], interval: '1s', timeout: '5s', retries: 1, start_period: '0s' };

export interface MainSettings {
  image: string;
  /** The keep-alive Berth runs as the container's entrypoint (its command is cleared). */
  keepAlive: string[];
  /** Laid over the environment the task's file gives main ([environment].env wins). */
  env: Readonly<Record<string, string>>;
  labels: Readonly<Record<string, string>>;
  /** The image has a HEALTHCHECK (Berth runs it after the entrypoint, as in a single sandbox). */
  imageHasHealthcheck?: boolean;
  cpus?: number;
  memoryMb?: number;
}

export interface GroupModelSettings {
  project: string;
  /** On every service, network and volume. */
  labels: Readonly<Record<string, string>>;
  /** Compose network key → the engine network Berth created for it. */
  networks: Readonly<Record<string, string>>;
  /** Service → the image it runs (built or aliased by Berth); its `build` section is dropped. */
  images: Readonly<Record<string, string>>;
  main: MainSettings;
  /** Berth's variables for every sidecar (the egress proxy of a task with allowlist phases); main's are in `main.env`. */
  sidecarEnv?: Readonly<Record<string, string>>;
}

/** Every network key the resolved model uses (Compose adds `default` when a service names none). */
export function networkKeys(model: ComposeModel): string[] {
  return Object.keys(model.networks ?? {});
}

/**
 * Harbor's own keep-alive, which its templates give main as its command whatever the task's file says: a file that
 * restates it (as Harbor's Terminal-Bench mapper writes) changes nothing, so it is no command of the task's.
 */
function isHarborKeepAlive(command: readonly string[] | null | undefined): boolean {
  const argv = command?.join('\0');
  return argv === 'sh\0-c\0sleep infinity' || argv === 'sleep\0infinity';
}

/** The image's ENTRYPOINT and CMD as the task's file overrides them for `main` (null: the image's own). */
export function mainLaunchOverride(model: ComposeModel): { entrypoint: string[] | null; command: string[] | null; healthcheck: Json | null } {
  const main = model.services[MAIN_SERVICE];
  const command = main?.command ?? null;
  return { entrypoint: main?.entrypoint ?? null, command: isHarborKeepAlive(command) ? null : command, healthcheck: (main?.healthcheck as Json | undefined) ?? null };
}

/** main's log folders, which Berth keeps in main (as Harbor's own mounts replace a task's at the same folder). */
const MAIN_LOG_FOLDERS = new Set<string>([SANDBOX_LAYOUT.agentLogs, SANDBOX_LAYOUT.verifierLogs, SANDBOX_LAYOUT.artifactsLogs]);

/** main's volumes but a bind of one of its log folders onto itself (Harbor's log-path variables, as Berth sets them). */
function withoutLogSelfBinds(volumes: unknown): unknown {
  if (!Array.isArray(volumes)) return volumes;
  return volumes.filter((v: Json) => !(v?.type === 'bind' && v.source === v.target && MAIN_LOG_FOLDERS.has(String(v.target))));
}

export interface ServiceBuild {
  service: string;
  /** Absolute (Compose resolves it against the file that names it). */
  context: string;
  /** Relative to the context. */
  dockerfile: string;
  args: Record<string, string>;
}

/** The sidecars Berth builds (main's image is prepared from the task's own settings). */
export function servicesToBuild(model: ComposeModel): ServiceBuild[] {
  const out: ServiceBuild[] = [];
  for (const [service, s] of Object.entries(model.services)) {
    if (service === MAIN_SERVICE || !s.build) continue;
    const args: Record<string, string> = {};
    for (const [k, v] of Object.entries(s.build.args ?? {})) if (v !== null && v !== undefined) args[k] = String(v);
    out.push({ service, context: s.build.context ?? '.', dockerfile: s.build.dockerfile ?? 'Dockerfile', args });
  }
  return out;
}

/** main and every service it depends on, however deep: what must be up before main is seeded. */
export function mainAndItsDependencies(model: ComposeModel): string[] {
  const seen = new Set<string>();
  const visit = (name: string) => {
    if (seen.has(name) || !model.services[name]) return;
    seen.add(name);
    for (const dep of Object.keys(model.services[name]!.depends_on ?? {})) visit(dep);
  };
  visit(MAIN_SERVICE);
  return [...seen];
}

/** Sidecars without `deploy.resources.limits`: they run at the engine's default size. */
export function defaultSizedSidecars(model: ComposeModel): string[] {
  return Object.entries(model.services)
    .filter(([name, s]) => name !== MAIN_SERVICE && !s.deploy?.resources?.limits && s.cpus === undefined && s.mem_limit === undefined)
    .map(([name]) => name);
}

function withLabels(entry: Json | null | undefined, labels: Readonly<Record<string, string>>): Json {
  const own = (entry?.labels as Record<string, string> | undefined) ?? {};
  return { ...(entry ?? {}), labels: { ...own, ...labels } };
}

/** The model `up` runs: Berth's networks, labels, images, and main's keep-alive, env and resources. */
export function groupModel(resolved: ComposeModel, s: GroupModelSettings): ComposeModel {
  const services: Record<string, ComposeService> = {};
  for (const [name, svc] of Object.entries(resolved.services)) {
    const next: ComposeService = { ...svc, labels: { ...(svc.labels ?? {}), ...escapeAll(s.labels) } };
    if (name !== MAIN_SERVICE && s.sidecarEnv && Object.keys(s.sidecarEnv).length > 0) {
      next.environment = { ...(svc.environment ?? {}), ...escapeAll(s.sidecarEnv) };
    }
    const image = s.images[name];
    if (image !== undefined) {
      next.image = image;
      delete next.build;
    }
    services[name] = next;
  }
  const main = services[MAIN_SERVICE];
  if (!main) throw new Error('the group has no main service');
  main.image = s.main.image;
  delete main.build;
  if (main.volumes !== undefined) main.volumes = withoutLogSelfBinds(main.volumes);
  main.entrypoint = s.main.keepAlive.map(escapeDollars);
  main.command = null;
  main.user = '0:0';
  main.init = true;
  // The task's own healthcheck on main is its declaration and runs (docs/design.md section 7, Images): the engine probes it
  // once Berth has seeded main, and dependents wait for it. The image's HEALTHCHECK alone would probe a server the
  // keep-alive has not started: main answers healthy at once for it, and Berth runs the image's check itself.
  if (!main.healthcheck && s.main.imageHasHealthcheck) main.healthcheck = PASSING_HEALTHCHECK;
  else if (!main.healthcheck) delete main.healthcheck;
  main.environment = { ...(main.environment ?? {}), ...escapeAll(s.main.env) };
  main.labels = { ...main.labels, ...escapeAll(s.main.labels) };
  if (s.main.cpus !== undefined || s.main.memoryMb !== undefined) {
    const limits = { ...(main.deploy?.resources?.limits ?? {}) };
    if (s.main.cpus !== undefined) limits.cpus = String(s.main.cpus);
    if (s.main.memoryMb !== undefined) limits.memory = `${s.main.memoryMb}M`;
    main.deploy = { ...(main.deploy ?? {}), resources: { ...(main.deploy?.resources ?? {}), limits } };
    if (s.main.memoryMb !== undefined) main.memswap_limit = `${s.main.memoryMb}M`;
  }

  const networks: Record<string, Json> = {};
  for (const key of networkKeys(resolved)) {
    const name = s.networks[key];
    if (!name) throw new Error(`no network was created for the group's network "${key}"`);
    networks[key] = { name, external: true };
  }
  const volumes: Record<string, Json> = {};
  for (const [key, v] of Object.entries(resolved.volumes ?? {})) volumes[key] = withLabels(v, escapeAll(s.labels));
  return { ...resolved, name: s.project, services, networks, volumes };
}
