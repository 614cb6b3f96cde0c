// A registry that needs credentials, for tests: Debian's docker-registry (Distribution) on a port of its own on
// loopback, its storage in a temporary folder, with htpasswd auth (`htpasswd` from apache2-utils for bcrypt, which
// the registry requires, installed once if missing) or with Distribution's token auth, its token service a small
// server of this helper that checks the same credentials and signs JWTs with a key whose certificate the registry
// trusts (openssl makes both). The local cluster's containerd is told to reach it over plain HTTP, as
// it is for the cluster's own registry (a hosts.toml under its certs.d, removed by stop()).
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { createPrivateKey, randomBytes, sign, X509Certificate } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
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

const b64url = (b: Buffer | string) => Buffer.from(b).toString('base64url');

/** Distribution's token service: GET (basic auth) or POST (OAuth2 password grant), answering a signed JWT for the scopes asked. */
async function startTokenService(dir: string, username: string, password: string, service: string, issuer: string): Promise<{ realm: string; close(): Promise<void> }> {
  await run('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', join(dir, 'token.key'), '-out', join(dir, 'token.crt'), '-days', '1', '-subj', '/CN=berth-test-token']);
  const key = createPrivateKey(readFileSync(join(dir, 'token.key')));
  const der = new X509Certificate(readFileSync(join(dir, 'token.crt'))).raw;
  const server = createHttpServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => { body += d.toString('utf8'); });
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://token');
      const form = new URLSearchParams(req.method === 'POST' ? body : '');
      const basic = /^Basic (.+)$/.exec(req.headers.authorization ?? '');
      const [user, pass] = basic ? Buffer.from(basic[1]!, 'base64').toString('utf8').split(/:(.*)/s) : [form.get('username'), form.get('password')];
      if (user !== username || pass !== password) {
        res.writeHead(401, { 'content-type': 'application/json' }).end('{"errors":[{"code":"UNAUTHORIZED"}]}');
        return;
      }
      const scopes = [...url.searchParams.getAll('scope'), ...form.getAll('scope')].flatMap((s) => s.split(' ')).filter(Boolean);
      const access = scopes.map((s) => {
        const [type, ...rest] = s.split(':');
        const actions = rest.pop()!.split(',');
        return { type, name: rest.join(':'), actions };
      });
      const now = Math.floor(Date.now() / 1000);
      const header = b64url(JSON.stringify({ typ: 'JWT', alg: 'RS256', x5c: [der.toString('base64')] }));
      const claims = b64url(JSON.stringify({ iss: issuer, sub: user, aud: service, exp: now + 600, nbf: now - 60, iat: now, jti: randomBytes(8).toString('hex'), access }));
      const signature = b64url(sign('sha256', Buffer.from(`${header}.${claims}`), key));
      const token = `${header}.${claims}.${signature}`;
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ token, access_token: token, expires_in: 600, issued_at: new Date().toISOString() }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return { realm: `http://127.0.0.1:${port}/token`, close: () => new Promise((r) => server.close(() => r())) };
}

export async function startAuthRegistry(mode: 'htpasswd' | 'token' = 'htpasswd', username = 'berth-test', password = `pw-${Date.now().toString(36)}`): Promise<AuthRegistry> {
  const dir = mkdtempSync(join(tmpdir(), 'berth-auth-registry-'));
  const port = await freePort();
  const host = `127.0.0.1:${port}`;
  let auth: string;
  let tokens: { realm: string; close(): Promise<void> } | undefined;
  if (mode === 'htpasswd') {
    await ensureHtpasswd();
    const { stdout } = await run('htpasswd', ['-Bbn', username, password]);
    writeFileSync(join(dir, 'htpasswd'), stdout);
    auth = `auth: { htpasswd: { realm: berth-test, path: ${join(dir, 'htpasswd')} } }`;
  } else {
    tokens = await startTokenService(dir, username, password, 'berth-test-registry', 'berth-test-issuer');
    auth = `auth: { token: { realm: "${tokens.realm}", service: berth-test-registry, issuer: berth-test-issuer, rootcertbundle: ${join(dir, 'token.crt')} } }`;
  }
  writeFileSync(join(dir, 'config.yml'), [
    'version: 0.1',
    `storage: { filesystem: { rootdirectory: ${join(dir, 'data')} }, delete: { enabled: true } }`,
    `http: { addr: "${host}" }`,
    auth,
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
    await tokens?.close();
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
