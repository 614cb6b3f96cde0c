import type Docker from 'dockerode';
import { setTimeout as sleep } from 'node:timers/promises';
import { asSandboxError, SandboxLost, SeedFailed } from '../errors.ts';

const READY_TIMEOUT_MS = 60_000;

/**
 * The keep-alive runs the root setup and then execs `sleep infinity`. Watching for that process
 * through the engine's `top` (a host-side ps, far cheaper than an exec) tells seed the setup is done;
 * a setup that failed ends the container, and its output becomes the seed failure.
 */
export async function waitForKeepAlive(container: Docker.Container, name: string): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  for (let attempt = 0; ; attempt++) {
    let top: { Processes?: string[][] };
    try {
      top = (await container.top({ ps_args: '-o pid,args' })) as { Processes?: string[][] };
    } catch (err) {
      if ((err as { statusCode?: number }).statusCode === 409) throw await setupFailure(container, name, err);
      throw asSandboxError(name, err);
    }
    if (top.Processes?.some((p) => p[p.length - 1] === 'sleep infinity')) return;
    if (Date.now() > deadline) {
      throw new SeedFailed('harbor:seed_failed', `sandbox ${name} did not finish its setup within ${READY_TIMEOUT_MS / 1000} s`);
    }
    await sleep(Math.min(5 * (attempt + 1), 100));
  }
}

async function setupFailure(container: Docker.Container, name: string, cause: unknown): Promise<Error> {
  try {
    const info = await container.inspect();
    if (info.State.Running) return new SandboxLost(name, cause);
    const logs = (await container.logs({ stdout: true, stderr: true, tail: 50 })) as Buffer;
    // Non-TTY logs carry 8-byte frame headers; drop them for the message.
    const text = stripFrames(logs).trim();
    return new SeedFailed(
      'harbor:seed_failed',
      `preparing sandbox ${name} failed (exit ${info.State.ExitCode}): ${text || 'no output'}`,
      text,
    );
  } catch (err) {
    return asSandboxError(name, err) as Error;
  }
}

export function stripFrames(buf: Buffer): string {
  const parts: Buffer[] = [];
  let i = 0;
  while (i + 8 <= buf.length) {
    const len = buf.readUInt32BE(i + 4);
    parts.push(buf.subarray(i + 8, i + 8 + len));
    i += 8 + len;
  }
  return Buffer.concat(parts).toString('utf8');
}
