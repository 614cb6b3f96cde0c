// A registry that needs credentials, for tests: Debian's docker-registry (Distribution) with htpasswd auth on a port
// of its own on loopback, its storage in a temporary folder; `htpasswd` (bcrypt, which the registry requires) from
// apache2-utils, installed once if missing. The local cluster's containerd is told to reach it over plain HTTP, as
// it is for the cluster's own registry (a hosts.toml under its certs.d, removed by stop()).
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { waitUntil } from './worker-process.ts';

const run = promisify(execFile);

export interface AuthRegistry {
  /** 127.0.0.1:<port> */
  host: string;
  username: string;
  password: string;
  /** A Docker config.json with `auths` for it, as `docker login` writes one. */
  dockerConfig: string;
  stop(): Promise<void>;
}

async function ensureHtpasswd(): Promise<void> {
  if (await run('sh', ['-c', 'command -v htpasswd']).then(() => true, () => false)) return;
  const install = () => run('apt-get', ['install', '-y', '--no-install-recommends', 'apache2-utils'], { env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
  await install().catch(async () => {
    await run('apt-get', ['update']);
    await install();
  });
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

export async function startAuthRegistry(username = 'berth-test', password = `pw-${Date.now().toString(36)}`): Promise<AuthRegistry> {
  await ensureHtpasswd();
  const dir = mkdtempSync(join(tmpdir(), 'berth-auth-registry-'));
  const port = await freePort();
  const host = `127.0.0.1:${port}`;
  const { stdout } = await run('htpasswd', ['-Bbn', username, password]);
  writeFileSync(join(dir, 'htpasswd'), stdout);
  writeFileSync(join(dir, 'config.yml'), [
    'version: 0.1',
    `storage: { filesystem: { rootdirectory: ${join(dir, 'data')} }, delete: { enabled: true } }`,
    `http: { addr: "${host}" }`,
    `auth: { htpasswd: { realm: berth-test, path: ${join(dir, 'htpasswd')} } }`,
  ].join('\n'));
  writeFileSync(join(dir, 'config.json'), JSON.stringify({ auths: { [host]: { auth: Buffer.from(`${username}:${password}`).toString('base64') } } }));
  const child: ChildProcess = spawn('docker-registry', ['serve', join(dir, 'config.yml')], { stdio: ['ignore', 'ignore', 'pipe'] });
  let log = '';
  child.stderr!.on('data', (d: Buffer) => { log = (log + d.toString('utf8')).slice(-4000); });
  const certs = join(process.env.BERTH_HOME ?? join(homedir(), '.berth'), 'kubernetes', 'containerd', 'certs.d', host);
  mkdirSync(certs, { recursive: true });
  writeFileSync(join(certs, 'hosts.toml'), `server = "http://${host}"\n[host."http://${host}"]\n  capabilities = ["pull", "resolve"]\n`);
  const stop = async () => {
    if (child.exitCode === null) {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
    }
    rmSync(certs, { recursive: true, force: true });
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await waitUntil(async () => {
      if (child.exitCode !== null) throw new Error(`docker-registry exited ${child.exitCode}: ${log}`);
      return (await fetch(`http://${host}/v2/`).then((r) => r.status, () => 0)) === 401;
    }, 20_000, `docker-registry on ${host} answering 401`);
  } catch (err) {
    await stop();
    throw err;
  }
  return { host, username, password, dockerConfig: join(dir, 'config.json'), stop };
}
