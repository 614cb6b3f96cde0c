import { CreateBucketCommand, ListBucketsCommand, S3Client } from '@aws-sdk/client-s3';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { repoRoot } from './cli.ts';
import { waitUntil } from './worker-process.ts';

/**
 * A SeaweedFS S3 server of the test's own (scripts/setup-s3.sh builds `weed` once): its own loopback ports, its own data
 * folder, one identity whose access key and secret are made here, and a bucket. `stop()` stops it and removes its data.
 * SeaweedFS (Apache-2.0), not MinIO: MinIO's server is AGPL and its repository is in maintenance mode.
 */
export interface S3Server {
  endpoint: string;
  bucket: string;
  region: string;
  /** The weed process (benchmarks read its CPU time). */
  pid: number;
  accessKeyId: string;
  secretAccessKey: string;
  /** The weed process's output so far. */
  output(): string;
  /** A client signed in as the server's identity. */
  client(): S3Client;
  /** berth.toml lines for a store in this server's bucket under `prefix` ([results] and the keys in [secrets]). */
  berthToml(prefix: string, extra?: { keepLocal?: boolean }): string;
  stop(): Promise<void>;
}

const run = promisify(execFile);
const berthHome = process.env.BERTH_HOME ?? join(homedir(), '.berth');
export const WEED_BIN = join(berthHome, 'tools', 'seaweedfs-20261109', 'bin', 'weed');

/** Builds weed when it is missing (once per machine: the script holds a lock). */
export async function ensureWeed(): Promise<string> {
  if (!existsSync(WEED_BIN)) {
    await run('bash', [join(repoRoot, 'scripts', 'setup-s3.sh')], { timeout: 60 * 60_000, maxBuffer: 8 * 1024 * 1024, env: { ...process.env, BERTH_HOME: berthHome } });
  }
  return WEED_BIN;
}

/** `count` distinct loopback ports free right now (each held until all are found, so none repeats). */
async function freePorts(count: number): Promise<number[]> {
  const held: Server[] = [];
  const ports: number[] = [];
  try {
    while (ports.length < count) {
      const s = createServer();
      await new Promise<void>((res, rej) => { s.once('error', rej); s.listen(0, '127.0.0.1', () => res()); });
      held.push(s);
      const port = (s.address() as { port: number }).port;
      // weed derives nothing from these (every gRPC port is given), but keep clear of the ephemeral range's top.
      if (port < 60000) ports.push(port);
    }
  } finally {
    await Promise.all(held.map((s) => new Promise((r) => s.close(r))));
  }
  return ports;
}

export async function startS3Server(opts: { bucket?: string } = {}): Promise<S3Server> {
  const weed = await ensureWeed();
  const dir = `/tmp/berth-s3-${randomBytes(4).toString('hex')}`;
  mkdirSync(join(dir, 'data'), { recursive: true });
  const accessKeyId = `BERTHTEST${randomBytes(6).toString('hex').toUpperCase()}`;
  const secretAccessKey = randomBytes(24).toString('base64url');
  const bucket = opts.bucket ?? `berth-test-${randomBytes(3).toString('hex')}`;
  const region = 'us-east-1';
  writeFileSync(join(dir, 's3.json'), JSON.stringify({
    identities: [{ name: 'berth-test', credentials: [{ accessKey: accessKeyId, secretKey: secretAccessKey }], actions: ['Admin', 'Read', 'List', 'Tagging', 'Write'] }],
  }));
  const [master, masterGrpc, volume, volumeGrpc, filer, filerGrpc, s3, s3Grpc] = await freePorts(8);
  const args = [
    'server', '-ip=127.0.0.1', '-ip.bind=127.0.0.1', `-dir=${join(dir, 'data')}`, '-volume.max=16',
    `-master.port=${master}`, `-master.port.grpc=${masterGrpc}`, '-master.volumeSizeLimitMB=256', '-master.telemetry=false',
    `-volume.port=${volume}`, `-volume.port.grpc=${volumeGrpc}`,
    `-filer.port=${filer}`, `-filer.port.grpc=${filerGrpc}`, `-filer.localSocket=${join(dir, 'filer.sock')}`,
    '-s3', `-s3.port=${s3}`, `-s3.port.grpc=${s3Grpc}`, '-s3.port.iceberg=0', '-s3.port.lance=0',
    `-s3.config=${join(dir, 's3.json')}`, `-s3.localSocket=${join(dir, 's3.sock')}`,
  ];
  const child: ChildProcess = spawn(weed, args, { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let out = '';
  child.stdout!.on('data', (d) => { out += d; });
  child.stderr!.on('data', (d) => { out += d; });
  const endpoint = `http://127.0.0.1:${s3}`;
  const client = () => {
    // As src/store/s3.ts does: the pinned SDK's notice about Node versions of its future releases is noise in a test's output.
    process.env['AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED'] ??= 'true';
    return new S3Client({ endpoint, region, forcePathStyle: true, credentials: { accessKeyId, secretAccessKey } });
  };
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      try { process.kill(-child.pid!, 'SIGTERM'); } catch { /* gone */ }
      await new Promise((r) => { child.once('exit', r); setTimeout(r, 15_000); });
      try { process.kill(-child.pid!, 'SIGKILL'); } catch { /* gone */ }
    }
    rmSync(dir, { recursive: true, force: true });
  };
  const server: S3Server = {
    endpoint, bucket, region, pid: child.pid!, accessKeyId, secretAccessKey, output: () => out, client, stop,
    berthToml: (prefix, extra = {}) => [
      '[results]', `store = "s3://${bucket}/${prefix}"`, `endpoint = "${endpoint}"`, `region = "${region}"`,
      ...(extra.keepLocal === false ? ['keep_local = false'] : []),
      '[secrets]', `AWS_ACCESS_KEY_ID = "${accessKeyId}"`, `AWS_SECRET_ACCESS_KEY = "${secretAccessKey}"`, '',
    ].join('\n'),
  };
  try {
    const c = client();
    try {
      // The S3 gateway answers once the master, volume and filer are up; then the bucket is made.
      await waitUntil(async () => {
        if (child.exitCode !== null) throw new Error(`weed exited (${child.exitCode}):\n${out.slice(-3000)}`);
        try { await c.send(new ListBucketsCommand({})); return true; } catch { return false; }
      }, 120_000, `SeaweedFS's S3 gateway at ${endpoint}`);
      await waitUntil(async () => {
        try { await c.send(new CreateBucketCommand({ Bucket: bucket })); return true; } catch (err) {
          return (err as { name?: string }).name === 'BucketAlreadyOwnedByYou';
        }
      }, 60_000, `bucket ${bucket}`);
    } finally {
      c.destroy();
    }
  } catch (err) {
    await stop();
    throw err;
  }
  return server;
}
