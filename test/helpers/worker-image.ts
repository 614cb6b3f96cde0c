// The repository's Dockerfile built into the worker image a cluster runs (deploy/kubernetes/worker.yaml), on a machine
// with no image registry to pull `node:20-bookworm-slim` from: its base is the local Debian image with this machine's
// own Node.js and npm copied in (NODE_IMAGE, the Dockerfile's build argument for air-gapped sites), and its `npm ci`
// reads this machine's npm cache (the Dockerfile's npm-cache/ beside it), so the build needs no registry at all.
import type Docker from 'dockerode';
import { execFile } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { repoRoot } from './cli.ts';
import { pushByDigest } from './kubernetes.ts';

const run = promisify(execFile);
const BASE = 'berth-base:bookworm';

async function dockerBuild(context: string, tag: string, buildArgs: Record<string, string> = {}, target?: string): Promise<void> {
  const args = ['build', '-q', '-t', tag, ...(target ? ['--target', target] : []), ...Object.entries(buildArgs).flatMap(([k, v]) => ['--build-arg', `${k}=${v}`]), context];
  try {
    await run('docker', args, { maxBuffer: 32 * 1024 * 1024, timeout: 15 * 60_000 });
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string; message: string };
    throw new Error(`docker ${args.join(' ')} failed: ${e.message}\n${e.stdout ?? ''}${e.stderr ?? ''}`);
  }
}

/** The id of the image `tag` names now, if any. */
async function imageId(tag: string): Promise<string | undefined> {
  return run('docker', ['image', 'inspect', '--format', '{{.Id}}', tag]).then((r) => r.stdout.trim(), () => undefined);
}

/**
 * Builds `tag`, then removes the image it named before when the build moved the tag: left alone, each run of the
 * in-cluster test would leave a dangling image of over a gigabyte behind. One still in use is kept.
 */
async function rebuild(context: string, tag: string, buildArgs: Record<string, string> = {}, target?: string): Promise<void> {
  const before = await imageId(tag);
  await dockerBuild(context, tag, buildArgs, target);
  if (before !== undefined && before !== await imageId(tag)) await run('docker', ['image', 'rm', before]).catch(() => undefined);
}

/** `berth-node:<version>`: the local base with the Node.js binary and npm this machine runs. */
async function nodeBaseImage(): Promise<string> {
  const tag = `berth-node:${process.version}`;
  const ctx = mkdtempSync(join(tmpdir(), 'berth-node-image-'));
  try {
    const npmDir = dirname(dirname(realpathSync(join(dirname(process.execPath), 'npm'))));
    cpSync(process.execPath, join(ctx, 'node'));
    cpSync(npmDir, join(ctx, 'npm'), { recursive: true });
    writeFileSync(join(ctx, 'Dockerfile'), [
      `FROM ${BASE}`,
      'COPY node /usr/local/bin/node',
      'COPY npm /usr/local/lib/node_modules/npm',
      'RUN ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm && node --version && npm --version',
      '',
    ].join('\n'));
    await rebuild(ctx, tag);
    return tag;
  } finally {
    rmSync(ctx, { recursive: true, force: true });
  }
}

/**
 * Builds the worker image from the repository's Dockerfile as it is (sources, lockfile) and pushes it to the local
 * cluster's registry; answers the reference pods pull, by digest.
 */
export async function buildWorkerImage(docker: Docker, registry: string): Promise<string> {
  const tag = `${registry}/berth-worker:test`;
  await buildLocalWorkerImage(tag);
  return await pushByDigest(docker, tag);
}

/** Builds the worker image from the repository's Dockerfile as it is (sources, lockfile) into the local engine as `tag`. */
export async function buildLocalWorkerImage(tag: string): Promise<void> {
  const nodeImage = await nodeBaseImage();
  const ctx = mkdtempSync(join(tmpdir(), 'berth-worker-image-'));
  try {
    for (const f of ['Dockerfile', 'package.json', 'package-lock.json', 'bin', 'src']) cpSync(join(repoRoot, f), join(ctx, f), { recursive: true });
    mkdirSync(join(ctx, 'npm-cache'));
    cpSync(join(process.env.npm_config_cache ?? join(homedir(), '.npm'), '_cacache'), join(ctx, 'npm-cache', '_cacache'), { recursive: true });
    // The install stage tagged too (the full build then takes it from the cache): untagged, every build would leave
    // it behind as another dangling image of over a gigabyte.
    await rebuild(ctx, 'berth-worker-deps:test', { NODE_IMAGE: nodeImage }, 'dependencies');
    await rebuild(ctx, tag, { NODE_IMAGE: nodeImage });
  } finally {
    rmSync(ctx, { recursive: true, force: true });
  }
}
