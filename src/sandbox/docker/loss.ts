// Which Docker engine errors mean the sandbox (or the engine) is gone: read here, in the driver, and nowhere above it.
// Everything the Docker provider hands up is typed by this (lossTyped): above the driver a loss is SandboxLost.
import { connectionLost, SandboxLost } from '../errors.ts';

interface DockerishError {
  statusCode?: number;
  message?: string;
  json?: { message?: string };
}

/** True when an engine error means the container (or the engine) is gone, not that one call was wrong. */
export function isDockerLoss(err: unknown): boolean {
  if (err instanceof SandboxLost || connectionLost(err)) return true;
  const e = err as DockerishError;
  if (!e || typeof e !== 'object') return false;
  // docker-modem's own text for a 404 always says "no such container": read the engine's message.
  // Its message is "(HTTP code N) <reason> - <engine message>".
  const full = e.message ?? '';
  const engineText = typeof e.json?.message === 'string' ? e.json.message : full.split(' - ').slice(1).join(' - ') || full;
  const msg = engineText.toLowerCase();
  if (e.statusCode === 404) return msg.includes('no such container') || msg.includes('no such exec');
  if (e.statusCode === 409) {
    return ['is not running', 'is paused', 'is restarting', 'removal', 'marked for removal'].some((s) => msg.includes(s));
  }
  return false;
}

/** Rethrow an engine error as SandboxLost when it means loss; otherwise unchanged. */
export function asSandboxError(name: string, err: unknown): unknown {
  if (err instanceof SandboxLost) return err;
  return isDockerLoss(err) ? new SandboxLost(name, err) : err;
}
