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

/**
 * A seed that failed; `kind` is the row's failure kind. `retryable` (a healthcheck that never passed,
 * Task Folder Format § Environment: healthcheck) means a fresh seed may succeed: the seed activity tries
 * again while it has attempts left, and the last one fails the seed.
 */
export class SeedFailed extends Error {
  override readonly name = 'SeedFailed';
  constructor(
    readonly kind: SeedFailureKind,
    message: string,
    readonly output = '',
    readonly retryable = false,
  ) {
    super(message);
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

interface DockerishError {
  statusCode?: number;
  code?: string;
  message?: string;
  json?: { message?: string };
}

const CONNECTION_CODES = new Set(['ECONNREFUSED', 'ENOENT', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH']);

/** True when an engine error means the container (or the engine) is gone, not that one call was wrong. */
export function isLossError(err: unknown): boolean {
  if (err instanceof SandboxLost) return true;
  const e = err as DockerishError;
  if (!e || typeof e !== 'object') return false;
  if (e.code && CONNECTION_CODES.has(e.code)) return true;
  if ((e.message ?? '').toLowerCase().includes('socket hang up')) return true;
  // docker-modem's own text for a 404 always says "no such container": read the engine's message.
  // Its message is "(HTTP code N) <reason> - <engine message>".
  const full = e.message ?? '';
  const engineText = typeof e.json?.message === 'string' ? e.json.message : full.split(' - ').slice(1).join(' - ') || full;
  const msg = engineText.toLowerCase();
  if (e.statusCode === 404) return msg.includes('no such container') || msg.includes('no such exec');
  if (e.statusCode === 409) {
    return ['is not running', 'is paused', 'is restarting', 'removal', 'marked for removal'].some((s) =>
      msg.includes(s),
    );
  }
  return false;
}

/** Rethrow an engine error as SandboxLost when it means loss; otherwise unchanged. */
export function asSandboxError(name: string, err: unknown): unknown {
  if (err instanceof SandboxLost) return err;
  return isLossError(err) ? new SandboxLost(name, err) : err;
}
