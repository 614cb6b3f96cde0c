import type { FailureKind } from '../outcomes/index.ts';
import type { ExecNotStarted } from './types.ts';

/** Stands in for a container name when the engine itself is lost during image work. */
export const ENGINE = '(docker engine)';

export type SeedFailureKind = Extract<FailureKind, 'harbor:overlay_failed' | 'harbor:entrypoint_failed' | 'harbor:seed_failed'>;

/** The container vanished, was stopped from outside, or the engine stopped answering. */
export class SandboxLost extends Error {
  override readonly name = 'SandboxLost';
  constructor(
    readonly containerName: string,
    override readonly cause: unknown,
  ) {
    super(`sandbox ${containerName} was lost: ${describeCause(cause)}`);
  }
}

/** A seed that failed; `kind` is the row's failure kind. */
export class SeedFailed extends Error {
  override readonly name: string = 'SeedFailed';
  constructor(
    readonly kind: SeedFailureKind,
    message: string,
    readonly output = '',
  ) {
    super(message);
  }
}

/**
 * A sandbox that never became ready in time (a healthcheck that never passed, Task Folder Format § Environment:
 * healthcheck; a pod or a group's services not ready): a fresh seed may succeed, so the seed activity tries again
 * while it has attempts left, and the last one fails the seed (harbor:seed_failed).
 */
export class SandboxNeverReady extends SeedFailed {
  override readonly name: string = 'SandboxNeverReady';
  constructor(message: string, output = '') {
    super('harbor:seed_failed', message, output);
  }
}

export class ImageMissing extends Error {
  override readonly name = 'ImageMissing';
  constructor(
    readonly image: string,
    cause: unknown,
    aliasHint = 'berth-base:bookworm',
  ) {
    super(
      `image ${image} is not present locally and could not be pulled (${describeCause(cause)}). ` +
        `Map it to a local image with --image-alias ${image}=${aliasHint} ` +
        `(or under [images.aliases] in berth.toml: "${image}" = "${aliasHint}").`,
    );
  }
}

export class ImageBuildFailed extends Error {
  override readonly name = 'ImageBuildFailed';
  constructor(
    readonly tag: string,
    readonly logPath: string,
    readonly logTail: string,
    reason: string,
  ) {
    super(`building image ${tag} failed: ${reason}. Full log: ${logPath}\n${logTail}`);
  }
}

/**
 * A detached process whose pid is gone without an exit-code file (killed from outside, OOM), or whose marker is gone:
 * the sandbox answered, so it is what happened inside it, not a lost sandbox.
 */
export class DetachedProcessLost extends Error {
  override readonly name = 'DetachedProcessLost';
}

/** A command Berth needed to run never started (ExecResult.notStarted: no shell, no such user, …): the sandbox answered. */
export class CommandNotStarted extends Error {
  override readonly name = 'CommandNotStarted';
  constructor(
    readonly notStarted: ExecNotStarted,
    message: string,
  ) {
    super(message);
  }
}

export function describeCause(cause: unknown): string {
  if (cause instanceof Error) return cause.message.trim();
  return String(cause);
}

const CONNECTION_CODES = new Set(['ECONNREFUSED', 'ENOENT', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH']);

/** Node's words for a connection to an engine or a cluster that broke or never opened: loss, for every driver. */
export function connectionLost(err: unknown): boolean {
  const e = err as { code?: unknown; message?: unknown } | null;
  if (!e || typeof e !== 'object') return false;
  if (typeof e.code === 'string' && CONNECTION_CODES.has(e.code)) return true;
  return typeof e.message === 'string' && e.message.toLowerCase().includes('socket hang up');
}
