import Docker from 'dockerode';
import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, openSync, closeSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { waitUntil } from './worker-process.ts';

/**
 * More Docker engines on this machine (docs/design.md section 5, More Docker engines; measured on this kind of machine,
 * Docker engine per test): each its own dockerd with its own socket, data root, exec root, pidfile, containerd
 * namespaces, key file (so its own engine id), a bridge this helper creates with a private address, and its own
 * address pool; no iptables rules, so nothing it runs reaches beyond this machine. The base image is loaded into
 * each. `stop()` stops everything it started, also after a failed test.
 */
export interface Engine {
  /** engine-1, engine-2, …: also the name a worker on it gives its host (BERTH_HOST_NAME). */
  name: string;
  dockerHost: string;
  docker: Docker;
  id: string;
  /** Kills this engine's dockerd with SIGKILL (its containers stay with containerd until `restart`). */
  kill(): void;
  /** Starts this engine's dockerd again on the same state; its containers come back stopped. */
  restart(): Promise<void>;
  /**
   * Stops this engine's dockerd in place (SIGSTOP): its socket still takes connections, and nothing answers. Resolves
   * once every thread of it is stopped, so no request sent after it is answered.
   */
  pause(): Promise<void>;
  /** Lets a paused dockerd go on (SIGCONT). */
  resume(): void;
}

export interface Engines {
  engines: Engine[];
  stop(): Promise<void>;
}

const BASE_IMAGE = 'berth-base:bookworm';
const SYSTEM_CONTAINERD = '/run/containerd/containerd.sock';

/** A /24 on 10.213-216.x that no route here uses yet, for engine i's bridge. */
function freeSubnet(i: number, tag: number): string {
  const routes = execFileSync('ip', ['-4', 'route'], { encoding: 'utf8' });
  for (let k = 0; k < 250; k++) {
    const third = (tag + k + i * 7) % 250;
    const net = `10.${213 + (i % 4)}.${third}`;
    if (!routes.includes(`${net}.`)) return net;
  }
  throw new Error('no free 10.213-216.x.0/24 for a test engine\'s bridge');
}

export async function startEngines(count: number): Promise<Engines> {
  const tag = randomBytes(2).readUInt16BE() % 250;
  const hadDocker0 = linkExists('docker0');
  const root = `/tmp/be-${randomBytes(3).toString('hex')}`;
  const started: Array<{ bridge: string; dir: string; ns: string; child?: ChildProcess; start: () => Promise<void> }> = [];
  const engines: Engine[] = [];
  const stop = async () => {
    // A test that failed with an engine paused would leave the removals below unanswered.
    for (const s of started) if (s.child && s.child.exitCode === null && s.child.signalCode === null) s.child.kill('SIGCONT');
    for (const e of engines) await removeAllContainers(e.docker).catch(() => undefined);
    await Promise.all(started.map(async (s) => {
      if (s.child && s.child.exitCode === null && s.child.signalCode === null) {
        s.child.kill('SIGTERM');
        await new Promise((r) => { s.child!.once('exit', r); setTimeout(r, 20_000); });
        if (s.child.exitCode === null && s.child.signalCode === null) s.child.kill('SIGKILL');
      }
      clearNamespace(s.ns);
      try { execFileSync('ip', ['link', 'del', s.bridge], { stdio: 'ignore' }); } catch { /* gone */ }
      unmountUnder(s.dir);
      rmSync(s.dir, { recursive: true, force: true });
    }));
    rmSync(root, { recursive: true, force: true });
    if (hadDocker0 && !linkExists('docker0')) throw new Error('the machine\'s docker0 bridge went missing while the test engines ran');
  };
  try {
    for (let i = 1; i <= count; i++) {
      const name = `engine-${i}`;
      const dir = join(root, `e${i}`);
      mkdirSync(dir, { recursive: true });
      const bridge = `brb${tag}x${i}`;
      const net = freeSubnet(i, tag);
      execFileSync('ip', ['link', 'add', bridge, 'type', 'bridge']);
      const ns = `berth-test-${tag}-${i}`;
      const entry: (typeof started)[number] = { bridge, dir, ns, start: async () => undefined };
      started.push(entry);
      execFileSync('ip', ['addr', 'add', `${net}.1/24`, 'dev', bridge]);
      execFileSync('ip', ['link', 'set', bridge, 'up']);
      const socket = join(dir, 'docker.sock');
      writeFileSync(join(dir, 'config.json'), JSON.stringify({ 'deprecated-key-path': join(dir, 'key.json') }));
      const args = [
        '--host', `unix://${socket}`, '--data-root', join(dir, 'data'), '--exec-root', join(dir, 'x'),
        '--pidfile', join(dir, 'docker.pid'), '--config-file', join(dir, 'config.json'),
        '--containerd-namespace', ns, '--containerd-plugins-namespace', `${ns}-plugins`,
        '--bridge', bridge, '--default-address-pool', `base=10.${217 + i}.${tag}.0/24,size=28`,
        '--iptables=false', '--ip-masq=false', '--ip-forward=false', '--userland-proxy=false',
        ...(existsSync(SYSTEM_CONTAINERD) ? ['--containerd', SYSTEM_CONTAINERD] : []),
      ];
      const docker = new Docker({ socketPath: socket });
      entry.start = async () => {
        rmSync(join(dir, 'docker.pid'), { force: true });
        const log = openSync(join(dir, 'dockerd.log'), 'a');
        entry.child = spawn('dockerd', args, { stdio: ['ignore', log, log], detached: true });
        closeSync(log);
        entry.child.unref();
        await waitUntil(async () => (await docker.ping().then(() => true, () => false)), 60_000, `${name}'s dockerd to answer on ${socket} (log ${dir}/dockerd.log)`);
      };
      await entry.start();
      // Not blocking: a save and load takes a minute on a loaded machine, and vitest's messages must go on meanwhile.
      await promisify(execFile)('sh', ['-c', `docker save ${BASE_IMAGE} | docker -H unix://${socket} load`]);
      const id = String((await docker.info()).ID);
      engines.push({
        name, dockerHost: `unix://${socket}`, docker, id,
        kill: () => entry.child?.kill('SIGKILL'),
        pause: async () => {
          const pid = entry.child?.pid;
          if (pid === undefined || !entry.child?.kill('SIGSTOP')) return;
          await waitUntil(() => allThreadsStopped(pid), 10_000, `${name}'s dockerd to stop`);
        },
        resume: () => entry.child?.kill('SIGCONT'),
        // A dockerd 20.10 started again on its data root deletes its stored default bridge network, and with it the
        // link named docker0 (the machine's engine's bridge, not its own): its network store goes first (tried).
        // Its containers' processes are killed too, so it restores them as stopped.
        restart: async () => {
          killTasks(ns);
          rmSync(join(dir, 'data', 'network'), { recursive: true, force: true });
          await entry.start();
        },
      });
    }
    const ids = new Set(engines.map((e) => e.id));
    if (ids.size !== count) throw new Error(`the test engines report ${ids.size} distinct engine ids for ${count} engines`);
    return { engines, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

async function removeAllContainers(docker: Docker): Promise<void> {
  const all = await docker.listContainers({ all: true });
  await Promise.all(all.map((c) => docker.getContainer(c.Id).remove({ force: true, v: true }).catch(() => undefined)));
}

/**
 * What a killed dockerd left with the system containerd in its namespaces (tasks go on running without it): the
 * tasks killed, then the containers and the namespaces removed.
 */
function clearNamespace(ns: string): void {
  if (!existsSync(SYSTEM_CONTAINERD)) return;
  for (const space of [ns, `${ns}-plugins`]) {
    killTasks(space);
    for (const id of ctr('-n', space, 'containers', 'ls', '-q').split('\n').filter(Boolean)) ctr('-n', space, 'containers', 'rm', id);
    ctr('namespaces', 'rm', space);
  }
}

const ctr = (...args: string[]): string => {
  try { return execFileSync('ctr', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }); } catch { return ''; }
};

/** Kills and deletes every task (running container process) in a containerd namespace. */
function killTasks(space: string): void {
  if (!existsSync(SYSTEM_CONTAINERD)) return;
  for (const id of ctr('-n', space, 'tasks', 'ls', '-q').split('\n').filter(Boolean)) {
    ctr('-n', space, 'tasks', 'kill', '-s', 'SIGKILL', id);
    for (let i = 0; i < 20 && ctr('-n', space, 'tasks', 'ls', '-q').includes(id); i++) {
      ctr('-n', space, 'tasks', 'rm', '-f', id);
      execFileSync('sleep', ['0.2']);
    }
  }
}

/** Every mount left under dir (overlay layers, network namespaces), deepest first. */
function unmountUnder(dir: string): void {
  const points = readFileSync('/proc/mounts', 'utf8').split('\n').map((l) => l.split(' ')[1] ?? '').filter((p) => p.startsWith(`${dir}/`));
  for (const p of points.sort().reverse()) {
    try { execFileSync('umount', ['-l', p], { stdio: 'ignore' }); } catch { /* already gone */ }
  }
}

function linkExists(name: string): boolean {
  try {
    execFileSync('ip', ['link', 'show', name], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** Whether every thread of the process is stopped (state T): a SIGSTOP reaches each thread at its next scheduling. */
function allThreadsStopped(pid: number): boolean {
  try {
    return readdirSync(`/proc/${pid}/task`).every((tid) => {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      return stat.slice(stat.lastIndexOf(')') + 2).startsWith('T');
    });
  } catch {
    return false;
  }
}
