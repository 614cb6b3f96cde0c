import type Docker from 'dockerode';
import { createWriteStream } from 'node:fs';
import { mkdir, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describeCause, ImageBuildFailed, ImageMissing } from '../errors.ts';
import { acquireFileLock } from '../file-lock.ts';
import type { ImageConfig } from '../image-config.ts';
import { readImageConfig } from './image-inspect.ts';
import { readContextFiles } from '../image-hash.ts';
import type { BuildImageOptions, BuildImageResult, EnsureImageOptions } from '../image-types.ts';

/**
 * Where the sandbox layer keeps build logs, locks and group files when its caller names no folder (the worker names
 * BERTH_HOME, src/config): a folder of this machine's temporary directory, shared by every process that uses it.
 */
export const DEFAULT_STATE_DIR = join(tmpdir(), 'berth-sandbox');

export async function imageExists(docker: Docker, ref: string): Promise<boolean> {
  return (await readImageConfig(docker, ref)) !== null;
}

/** Present locally → its configuration; else one pull attempt; failing that, ImageMissing naming the alias option. */
export async function ensureImage(docker: Docker, ref: string, options: EnsureImageOptions = {}): Promise<ImageConfig> {
  const present = await readImageConfig(docker, ref);
  if (present) return present;
  try {
    await pullImage(docker, ref, options.pullTimeoutMs ?? 300_000);
  } catch (err) {
    throw new ImageMissing(ref, err, options.aliasHint);
  }
  const pulled = await readImageConfig(docker, ref);
  if (!pulled) throw new ImageMissing(ref, new Error('pull finished without the image'), options.aliasHint);
  return pulled;
}

async function pullImage(docker: Docker, ref: string, timeoutMs: number): Promise<void> {
  const stream = (await docker.pull(ref)) as NodeJS.ReadableStream & { destroy(): void };
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      stream.destroy();
      reject(new Error(`pull did not finish within ${timeoutMs} ms`));
    }, timeoutMs);
    docker.modem.followProgress(stream, (err: Error | null, out: { error?: string }[]) => {
      clearTimeout(timer);
      const failed = out?.find((e) => e.error);
      if (err) reject(err);
      else if (failed) reject(new Error(failed.error));
      else resolve();
    });
  });
}

const inFlight = new Map<string, Promise<BuildImageResult>>();

/**
 * Builds once per tag: callers in this process share the in-flight build, other processes wait on
 * a lock file, and an image already present is never rebuilt (tags are content hashes).
 */
export function buildImage(docker: Docker, options: BuildImageOptions): Promise<BuildImageResult> {
  const running = inFlight.get(options.tag);
  if (running) return running.then((r) => ({ ...r, built: false }));
  const p = buildUnderFileLock(docker, options).finally(() => inFlight.delete(options.tag));
  inFlight.set(options.tag, p);
  return p;
}

async function buildUnderFileLock(docker: Docker, o: BuildImageOptions): Promise<BuildImageResult> {
  const stateDir = o.stateDir ?? DEFAULT_STATE_DIR;
  const logPath = o.logPath ?? join(stateDir, 'build-logs', `${o.tag.replace(/[^A-Za-z0-9_.-]/g, '_')}.log`);
  const lockPath = join(o.lockDir ?? join(stateDir, 'locks'), `build-${o.tag.replace(/[^A-Za-z0-9_.-]/g, '_')}.lock`);
  const release = await acquireFileLock(lockPath);
  try {
    if (await imageExists(docker, o.tag)) return { tag: o.tag, built: false, logPath };
    await runBuild(docker, o, logPath);
    return { tag: o.tag, built: true, logPath };
  } finally {
    await release();
  }
}

interface BuildEvent {
  stream?: string;
  error?: string;
  errorDetail?: { message?: string };
}
type FollowProgress = (
  stream: NodeJS.ReadableStream,
  onFinished: (err: Error | null) => void,
  onProgress: (event: BuildEvent) => void,
) => void;

const BASE64_LINE = /^[A-Za-z0-9+/]{8,}={0,2}$/;

/** dockerode's BuildKit decoder leaves RUN output base64-encoded; decode lines that are clearly that. */
function readableLine(line: string): string {
  const t = line.trimEnd();
  if (!BASE64_LINE.test(t) || t.length % 4 !== 0) return line;
  const decoded = Buffer.from(t, 'base64').toString('utf8');
  return /^[^\x00-\x08\x0e-\x1f\ufffd]*$/.test(decoded) ? decoded.replace(/\n?$/, '\n') : line;
}

/** BuildKit through the Engine API (dockerode `version: '2'`, which opens the session itself): needed for COPY --chmod. */
async function runBuild(docker: Docker, o: BuildImageOptions, logPath: string): Promise<void> {
  await mkdir(dirname(logPath), { recursive: true });
  const log = createWriteStream(logPath);
  const src = (await readContextFiles(o.contextDir)).filter((f) => f.type !== 'directory').map((f) => f.path);
  let failure: string | undefined;
  try {
    const stream = await docker.buildImage(
      { context: o.contextDir, src },
      { t: o.tag, dockerfile: o.dockerfile ?? 'Dockerfile', version: '2', rm: true, forcerm: true, buildargs: o.buildArgs },
    );
    // dockerode 5's followProgress (BuildKit-aware) is missing from @types/dockerode 4.
    const follow = (docker as unknown as { followProgress: FollowProgress }).followProgress.bind(docker);
    await new Promise<void>((resolve, reject) => {
      follow(
        stream,
        (err: Error | null) => (err ? reject(err) : resolve()),
        (event) => {
          if (event.stream) log.write(readableLine(event.stream));
          if (event.error) {
            failure = event.errorDetail?.message ?? event.error;
            log.write(`ERROR: ${failure}\n`);
          }
        },
      );
    });
  } catch (err) {
    failure = describeCause(err);
    log.write(`ERROR: ${failure}\n`);
  } finally {
    await new Promise<void>((resolve) => log.end(resolve));
  }
  if (failure !== undefined) {
    const text = await readFile(logPath, 'utf8').catch(() => '');
    throw new ImageBuildFailed(o.tag, logPath, text.split('\n').slice(-30).join('\n'), failure);
  }
}
