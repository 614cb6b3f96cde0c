// A sandbox that does no container work, for `npm run bench -- scale` only: every episode still runs Berth's whole
// workflow (pick a host, prepare, seed, the agent's turn, the verifier, the row), so what Temporal and the worker spend
// is what they spend for a real episode, with the engine's share taken out. Behind the seam (SandboxDriver under
// DriverSandboxProvider), nothing above it knows: the seed, detached processes and files run Berth's own code on it.
//
// exec answers Berth's own scripts as a sandbox that has every tool would, from what it was asked (the detached
// launch, wait and poll scripts by their $0, the verifier's preflight and test.sh run by their marker words): every
// detached process exits 0 at once, and test.sh "writes" reward 1. Files are kept in memory per sandbox (uploads are
// unpacked into a map, downloads packed from it). Any other command succeeds with no output.
import { hostname } from 'node:os';
import { pack, extract } from 'tar-stream';
import { DriverSandboxProvider } from '../src/sandbox/index.ts';
import type {
  DriverCapabilities, ExecResult, GpuSupport, SandboxDriver, SandboxInfo, SandboxProvider, StdinProcess,
} from '../src/sandbox/index.ts';
import type { EngineIdentity, GroupCreateResult, GroupHandle, LabelledSandbox, PathKind, ServiceHandle, SingleSandboxSpec } from '../src/sandbox/driver.ts';
import type { RawExecOptions } from '../src/sandbox/exec.ts';
import type { ImageConfig } from '../src/sandbox/image-config.ts';
import type { SandboxImages, SandboxNetwork } from '../src/sandbox/provider.ts';

const NULL_IMAGE_ID = `sha256:${'0'.repeat(64)}`;
const IMAGE: ImageConfig = {
  id: NULL_IMAGE_ID, user: null, workdir: null, env: { PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' },
  entrypoint: null, cmd: null, healthcheck: null,
};
const VERIFIER_LOGS = '/logs/verifier';

interface NullSandbox {
  handle: ServiceHandle;
  labels: Record<string, string>;
  running: boolean;
  /** Absolute path → content (folders are implied by their files). */
  files: Map<string, Buffer>;
  /** Detached keys launched: they exited 0 at once. */
  detached: Set<string>;
}

/** What the driver was asked, by kind (the benchmark prints it for one episode, to show the path taken). */
export type NullCalls = Record<string, number>;

const ok = (stdout = ''): ExecResult => ({ exitCode: 0, stdout, stderr: '', stdoutTruncated: false, stderrTruncated: false, timedOut: false });

async function tarOf(entries: Array<{ name: string; content?: Buffer }>): Promise<Buffer> {
  const p = pack();
  const chunks: Buffer[] = [];
  p.on('data', (c: unknown) => chunks.push(c as Buffer));
  const done = new Promise<void>((resolve, reject) => { p.on('end', resolve); p.on('error', reject); });
  for (const e of entries) {
    if (e.content === undefined) p.entry({ name: e.name, type: 'directory', mode: 0o777 });
    else p.entry({ name: e.name, mode: 0o644 }, e.content);
  }
  p.finalize();
  await done;
  return Buffer.concat(chunks);
}

async function untar(archive: Buffer | NodeJS.ReadableStream, into: string, files: Map<string, Buffer>): Promise<void> {
  const x = extract();
  const done = new Promise<void>((resolve, reject) => {
    x.on('entry', (header, stream, next) => {
      const parts: Buffer[] = [];
      stream.on('data', (c: unknown) => parts.push(c as Buffer));
      stream.on('end', () => {
        if (header.type === 'file') files.set(`${into.replace(/\/$/, '')}/${header.name.replace(/^\.?\//, '')}`, Buffer.concat(parts));
        next();
      });
      stream.resume();
    });
    x.on('finish', resolve);
    x.on('error', reject);
  });
  if (Buffer.isBuffer(archive)) x.end(archive);
  else (archive as NodeJS.ReadableStream).pipe(x);
  await done;
}

/** The files under `dir` (itself first, as `tar -C parent -cf - base` lists it), named from dir's parent. */
async function folderTar(files: Map<string, Buffer>, dir: string): Promise<Buffer> {
  const parent = dir.slice(0, dir.lastIndexOf('/'));
  const under = [...files].filter(([p]) => p.startsWith(`${dir}/`)).map(([p, content]) => ({ name: p.slice(parent.length + 1), content }));
  return tarOf([{ name: `${dir.slice(parent.length + 1)}/` }, ...under]);
}

export class NullSandboxDriver implements SandboxDriver {
  readonly sandbox = 'null';
  readonly capabilities: DriverCapabilities = {
    groups: false, internalNetworks: false, networkSwitching: false, userWithGroup: true, gpus: false, noNetwork: true,
    allowlist: false, finalState: false, stopStart: true, modelGateway: false,
  };
  readonly calls: NullCalls = {};
  private readonly sandboxes = new Map<string, NullSandbox>();
  private made = 0;

  /** `id` names the host's sandbox queue: one per null "engine" (one per benchmark worker). */
  constructor(private readonly id: string) {}

  private count(kind: string): void { this.calls[kind] = (this.calls[kind] ?? 0) + 1; }

  private get(target: Pick<ServiceHandle, 'name' | 'containerId'>): NullSandbox {
    const s = this.sandboxes.get(target.name) ?? [...this.sandboxes.values()].find((x) => x.handle.containerId === target.containerId);
    if (!s) throw new Error(`null sandbox ${target.name} is not there`);
    return s;
  }

  async engineIdentity(): Promise<EngineIdentity> {
    return { id: this.id, name: hostname(), version: 'null' };
  }

  async createOrAdoptSandbox(spec: SingleSandboxSpec): Promise<{ handle: ServiceHandle; adopted: boolean }> {
    this.count('create');
    const had = this.sandboxes.get(spec.name);
    if (had) return { handle: had.handle, adopted: true };
    const handle = { name: spec.name, containerId: `null-${this.id}-${++this.made}`, user: spec.user, workdir: spec.workdir };
    const labels = { 'berth.workflow': spec.labels.workflowId, 'berth.batch': spec.labels.batch, 'berth.role': spec.labels.role };
    this.sandboxes.set(spec.name, { handle, labels, running: true, files: new Map(), detached: new Set() });
    return { handle, adopted: false };
  }

  async createOrAdoptGroup(): Promise<GroupCreateResult> {
    throw new Error('the null sandbox runs no groups (capabilities.groups is false)');
  }

  async inspectGroup(): Promise<GroupHandle> {
    throw new Error('the null sandbox runs no groups');
  }

  async attach(name: string): Promise<ServiceHandle> {
    return this.get({ name, containerId: '' }).handle;
  }

  async inspect(target: ServiceHandle): Promise<SandboxInfo> {
    const s = this.get(target);
    return { name: s.handle.name, containerId: s.handle.containerId, running: s.running, status: s.running ? 'running' : 'exited', exitCode: s.running ? null : 0, oomKilled: false, labels: s.labels, image: NULL_IMAGE_ID };
  }

  async logTail(): Promise<string> {
    return '(null sandbox: no output)';
  }

  async exec(target: ServiceHandle, o: RawExecOptions): Promise<ExecResult> {
    const s = this.get(target);
    const [shell, flag, script = '', name = '', ...args] = o.argv;
    const isScript = (shell === 'sh' || shell === 'bash' || shell === '/bin/sh') && flag === '-c';
    if (!isScript) { this.count('exec:other'); return ok(); }
    if (name === 'berth-launch') {
      this.count('exec:detached-launch');
      const [mode = '', dir = '', , , , , , tailb = '0'] = args;
      s.detached.add(dir);
      const lines = [];
      if (mode.includes('c')) lines.push('berth:claim claimed');
      if (mode.includes('s')) lines.push('berth:start started');
      if (mode.includes('w')) lines.push('berth:wait exit 0 0', ...(Number(tailb) > 0 ? ['berth:tail 0'] : []));
      return ok(`${lines.join('\n')}\n`);
    }
    if (name === 'berth-wait') {
      this.count('exec:detached-wait');
      const [dir = '', , , tailb = '0'] = args;
      if (!s.detached.has(dir)) return ok('berth:wait missing\n');
      return ok(`berth:wait exit 0 0\n${Number(tailb) > 0 ? 'berth:tail 0\n' : ''}`);
    }
    if (name === 'berth-poll') {
      this.count('exec:detached-poll');
      return ok(s.detached.has(args[0] ?? '') ? 'exit 0 0\n' : 'missing\n');
    }
    if (name === 'berth-start') {
      this.count('exec:detached-start');
      s.detached.add(args[0] ?? '');
      return ok('started\n');
    }
    const out: string[] = [];
    // The verifier's preflight: every tool there, and (when it clears) the clear done.
    if (script.includes('berth-missing-start:')) out.push('berth-missing-start:', 'berth-missing-transfer:');
    if (script.includes('echo berth-ready')) out.push('berth-ready');
    if (script.includes('/tests/test.sh >')) {
      this.count('exec:test.sh');
      s.files.set(`${VERIFIER_LOGS}/reward.txt`, Buffer.from('1\n'));
      s.files.set(`${VERIFIER_LOGS}/test-stdout.txt`, Buffer.from('null sandbox: test.sh wrote reward 1\n'));
      out.push('berth-artifacts-empty', 'berth-snapshot-begin', (await folderTar(s.files, VERIFIER_LOGS)).toString('base64'), 'berth-snapshot-end');
    } else {
      this.count(out.length > 0 ? 'exec:preflight' : 'exec:script');
    }
    return ok(out.length > 0 ? `${out.join('\n')}\n` : '');
  }

  async putArchive(target: ServiceHandle, containerDir: string, archive: Buffer | NodeJS.ReadableStream): Promise<void> {
    this.count('putArchive');
    await untar(archive, containerDir, this.get(target).files);
  }

  async getArchive(target: ServiceHandle, containerPath: string): Promise<NodeJS.ReadableStream> {
    this.count('getArchive');
    const { Readable } = await import('node:stream');
    const files = this.get(target).files;
    const file = files.get(containerPath);
    const tar = file !== undefined
      ? await tarOf([{ name: containerPath.slice(containerPath.lastIndexOf('/') + 1), content: file }])
      : await folderTar(files, containerPath.replace(/\/$/, ''));
    return Readable.from([tar]);
  }

  async pathKind(target: ServiceHandle, containerPath: string): Promise<PathKind | null> {
    this.count('pathKind');
    const files = this.get(target).files;
    if (files.has(containerPath)) return 'file';
    const dir = `${containerPath.replace(/\/$/, '')}/`;
    return [...files.keys()].some((p) => p.startsWith(dir)) ? 'dir' : null;
  }

  async stop(target: ServiceHandle): Promise<void> {
    this.get(target).running = false;
  }

  async start(target: ServiceHandle): Promise<void> {
    this.get(target).running = true;
  }

  async remove(sandbox: Pick<LabelledSandbox, 'name' | 'kind'>): Promise<{ removed: boolean }> {
    this.count('remove');
    for (const [name, s] of this.sandboxes) {
      if (name === sandbox.name || s.handle.containerId === sandbox.name) { this.sandboxes.delete(name); return { removed: true }; }
    }
    return { removed: false };
  }

  async listByLabel(): Promise<LabelledSandbox[]> {
    return [...this.sandboxes.values()].map((s) => ({ name: s.handle.name, kind: 'single' as const, workflowId: s.labels['berth.workflow'] ?? '' }));
  }

  async imageConfiguration(): Promise<ImageConfig | null> {
    return IMAGE;
  }

  async putOnNetwork(): Promise<void> {}

  /** Sandboxes held now (the benchmark checks that every episode's was removed). */
  get held(): number { return this.sandboxes.size; }
}

const nullImages: SandboxImages = {
  ensure: async () => IMAGE,
  config: async () => IMAGE,
  build: async () => { throw new Error('the null sandbox builds no images'); },
  id: async () => NULL_IMAGE_ID,
  labels: async () => ({}),
  tag: async () => undefined,
  labelled: async () => [],
  runOnce: async () => ({ exitCode: 0, stdout: '' }),
};

const nullNetwork: SandboxNetwork = {
  egress: async () => { throw new Error('the null sandbox has no egress network (capabilities.allowlist is false)'); },
  address: async () => null,
  holds: async () => false,
  applyPhase: async () => undefined,
  defaultRanges: async () => [],
};

export class NullSandboxProvider extends DriverSandboxProvider<NullSandboxDriver> implements SandboxProvider {
  readonly images = nullImages;
  readonly network = nullNetwork;

  constructor(engineId: string) {
    super(new NullSandboxDriver(engineId));
  }

  async execWithStdin(): Promise<StdinProcess> {
    throw new Error('the null sandbox keeps no process attached');
  }

  async gpuSupport(): Promise<GpuSupport> {
    return { ok: false, reason: 'the null sandbox has no GPUs' };
  }

  async engineInfo(): Promise<{ id: string; name: string | null }> {
    const e = await this.driver.engineIdentity();
    return { id: e.id, name: e.name };
  }

  override async pollHealthcheck(): Promise<void> {}
}

