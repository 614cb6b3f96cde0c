// Credentials for the registry task images are pushed to and pulled from ([kubernetes].registry), read from a Docker
// config.json as the docker CLI reads it (a credential helper named in `credHelpers`, else `credsStore`, else `auths`
// as `docker login` writes them), and the two ways a registry asks for them (Distribution's token
// authentication): HTTP basic, or a bearer token fetched from the realm its WWW-Authenticate challenge names.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

export interface RegistryCredentials {
  readonly username: string;
  readonly password: string;
}

/** The config.json to read: [kubernetes].docker_config, else $DOCKER_CONFIG/config.json, else ~/.docker/config.json. */
export function dockerConfigPath(configured: string | undefined, env: Readonly<Record<string, string | undefined>> = process.env): string {
  if (configured) return configured;
  return join(env['DOCKER_CONFIG'] ?? join(homedir(), '.docker'), 'config.json');
}

/** The keys `docker login` may have written a registry under. */
function keysFor(host: string): string[] {
  const hub = host === 'registry-1.docker.io' || host === 'docker.io' || host === 'index.docker.io';
  return [host, `https://${host}`, `http://${host}`, `https://${host}/v1/`, `https://${host}/v2/`, ...(hub ? ['https://index.docker.io/v1/', 'docker.io'] : [])];
}

interface AuthEntry { auth?: string; username?: string; password?: string }

/**
 * The credentials config.json (`text`, read from `file`) holds for `host`; null when it holds none. An entry that is
 * there but unreadable is an error naming the file, the key and the fix.
 */
export function credentialsFromDockerConfig(text: string, file: string, host: string, helper: CredentialHelperRunner = runCredentialHelper): RegistryCredentials | null {
  let config: { auths?: Record<string, AuthEntry>; credHelpers?: Record<string, string>; credsStore?: string };
  try {
    config = JSON.parse(text) as typeof config;
  } catch (err) {
    throw new Error(`${file}: not JSON (${(err as Error).message}); fix it or run \`docker login ${host}\` again`);
  }
  // As the docker CLI: a helper named for the registry, else the store for every registry, else auths.
  const helperKey = keysFor(host).find((k) => typeof config.credHelpers?.[k] === 'string');
  if (helperKey) return fromHelper(helper, config.credHelpers![helperKey]!, helperKey, file, `credHelpers["${helperKey}"]`);
  if (typeof config.credsStore === 'string' && config.credsStore !== '') {
    const stored = keysFor(host).find((k) => config.auths?.[k] !== undefined) ?? host;
    return fromHelper(helper, config.credsStore, stored, file, 'credsStore');
  }
  const key = keysFor(host).find((k) => config.auths?.[k] !== undefined);
  if (!key) return null;
  const entry = config.auths![key]!;
  if (entry.username !== undefined && entry.password !== undefined) return { username: entry.username, password: entry.password };
  const decoded = entry.auth ? Buffer.from(entry.auth, 'base64').toString('utf8') : '';
  const colon = decoded.indexOf(':');
  if (colon <= 0) {
    throw new Error(`${file}: key auths["${key}"].auth is not base64 of "user:password"; run \`docker login ${host}\` again, or write it as base64 of user:password`);
  }
  return { username: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

/** Runs `docker-credential-<name> get` with the server on stdin: its exit code and output. */
export type CredentialHelperRunner = (name: string, server: string) => { status: number | null; stdout: string; stderr: string; error?: Error };

export const runCredentialHelper: CredentialHelperRunner = (name, server) => {
  const r = spawnSync(`docker-credential-${name}`, ['get'], { input: server, encoding: 'utf8', timeout: 30_000 });
  return { status: r.status, stdout: r.stdout ?? '', stderr: r.stderr ?? '', ...(r.error ? { error: r.error } : {}) };
};

/** The credentials a Docker credential helper keeps for `server` (its protocol: `get`, the server on stdin, JSON out). */
function fromHelper(run: CredentialHelperRunner, name: string, server: string, file: string, key: string): RegistryCredentials | null {
  const program = `docker-credential-${name}`;
  const r = run(name, server);
  if (r.error) {
    const missing = (r.error as NodeJS.ErrnoException).code === 'ENOENT';
    throw new Error(`${file}: key ${key} names the credential helper ${program}, which ${missing ? 'is not on this worker\'s PATH' : `did not run (${r.error.message})`}; ` +
      `install it, or remove the key and give the registry's credentials in auths (docker login)`);
  }
  // Not found: newer helpers exit 1 saying so, older ones answer empty credentials.
  if (r.status !== 0) {
    if (/credentials not found/i.test(`${r.stdout}${r.stderr}`)) return null;
    throw new Error(`${file}: key ${key}: ${program} get ${server} failed (exit ${r.status}): ${(r.stderr || r.stdout).trim().slice(0, 500)}; fix the helper's store, or run \`docker login ${server}\` again`);
  }
  let answer: { Username?: string; Secret?: string };
  try {
    answer = JSON.parse(r.stdout) as typeof answer;
  } catch {
    throw new Error(`${file}: key ${key}: ${program} get ${server} answered no JSON; fix the helper, or remove the key and use auths`);
  }
  if (!answer.Username && !answer.Secret) return null;
  if (answer.Username === '<token>') {
    throw new Error(`${file}: key ${key}: ${program} keeps an identity token for ${server}, which Berth cannot push with; run \`docker login ${server}\` with a user and password`);
  }
  return { username: answer.Username ?? '', password: answer.Secret ?? '' };
}

/** The credentials for `host` in the config.json at `file` (none when the file or its entry is missing). */
export function registryCredentials(file: string, host: string): RegistryCredentials | null {
  return existsSync(file) ? credentialsFromDockerConfig(readFileSync(file, 'utf8'), file, host) : null;
}

export const basicAuth = (c: RegistryCredentials): string => `Basic ${Buffer.from(`${c.username}:${c.password}`).toString('base64')}`;

/** A WWW-Authenticate challenge: the scheme and its parameters (`realm`, `service`, `scope` for a bearer one). */
export interface Challenge {
  readonly scheme: string;
  readonly params: Readonly<Record<string, string>>;
}

/** Parses `Bearer realm="https://auth/token",service="registry",scope="repository:x:pull"` (and `Basic realm="r"`). */
export function parseChallenge(header: string): Challenge | null {
  const m = /^\s*([A-Za-z]+)\s*(.*)$/.exec(header);
  if (!m) return null;
  const params: Record<string, string> = {};
  for (const p of m[2]!.matchAll(/([A-Za-z_]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s,]+))/g)) params[p[1]!.toLowerCase()] = p[2] !== undefined ? p[2].replace(/\\(.)/g, '$1') : p[3]!;
  return { scheme: m[1]!.toLowerCase(), params };
}

/** The URL a bearer challenge sends for a token: its realm with its service and scope. */
export function tokenUrl(challenge: Challenge): string {
  const realm = challenge.params['realm'];
  if (!realm) throw new Error(`the registry's bearer challenge names no realm (${JSON.stringify(challenge.params)})`);
  const url = new URL(realm);
  if (challenge.params['service']) url.searchParams.set('service', challenge.params['service']);
  if (challenge.params['scope']) url.searchParams.set('scope', challenge.params['scope']);
  return url.toString();
}
