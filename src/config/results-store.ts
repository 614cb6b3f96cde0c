// berth.toml [results] (docs/configuration.md, [results]): where episode files are stored, and with which credentials.
// Credentials are read on the machine that uses them (a worker host uploading, a client reading) and are never part
// of a row, a workflow input or a log line: only `StoreLocation` (bucket and prefix) travels.
import type { BerthConfig } from './berth-config.ts';

/** What a batch carries of the store: where, never how to sign in. */
export interface StoreLocation {
  /** s3://bucket[/prefix] as berth.toml says it. */
  url: string;
  bucket: string;
  /** The key prefix, without a trailing slash ('' for the bucket's root). */
  prefix: string;
}

export interface StoreSettings extends StoreLocation {
  endpoint?: string;
  region: string;
  pathStyle: boolean;
  keepLocal: boolean;
}

export interface StoreCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

/** The default region when neither berth.toml nor AWS_REGION names one (S3-compatible servers ignore it). */
export const DEFAULT_STORE_REGION = 'us-east-1';

export function storeLocationOf(url: string): StoreLocation {
  const m = /^s3:\/\/([^/]+)(?:\/(.*))?$/.exec(url);
  if (!m) throw new Error(`${url} is not an s3://bucket[/prefix] URL (docs/configuration.md, [results])`);
  return { url, bucket: m[1]!, prefix: (m[2] ?? '').replace(/\/+$/, '') };
}

/** [results] as settings, or null when no store is set (files stay on the hosts, as without this section). */
export function storeSettingsOf(config: BerthConfig, env: NodeJS.ProcessEnv = process.env): StoreSettings | null {
  const r = config.results;
  if (!r.store) return null;
  return {
    ...storeLocationOf(r.store),
    ...(r.endpoint ? { endpoint: r.endpoint.replace(/\/$/, '') } : {}),
    region: r.region ?? env.AWS_REGION ?? env.AWS_DEFAULT_REGION ?? DEFAULT_STORE_REGION,
    pathStyle: r.path_style ?? r.endpoint !== undefined,
    keepLocal: r.keep_local,
  };
}

/**
 * The access key from berth.toml [secrets] (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN), else the same
 * environment variables; undefined leaves the AWS SDK's own chain (profiles, instance roles) to find them.
 */
export function storeCredentialsOf(config: BerthConfig, env: NodeJS.ProcessEnv = process.env): StoreCredentials | undefined {
  const from = (name: string): string | undefined => config.secrets[name] ?? env[name];
  const accessKeyId = from('AWS_ACCESS_KEY_ID');
  const secretAccessKey = from('AWS_SECRET_ACCESS_KEY');
  if (!accessKeyId || !secretAccessKey) return undefined;
  const sessionToken = from('AWS_SESSION_TOKEN');
  return { accessKeyId, secretAccessKey, ...(sessionToken ? { sessionToken } : {}) };
}
