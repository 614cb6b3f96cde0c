import type Docker from 'dockerode';
import { setTimeout as sleep } from 'node:timers/promises';
import { SandboxLost, SeedFailed } from '../errors.ts';
import { asSandboxError } from './loss.ts';
import { CHANNEL_PROCESS } from '../channel-protocol.ts';
import { KeepAliveStream } from './keep-alive-stream.ts';

const READY_TIMEOUT_MS = 60_000;
/** A keep-alive that never prints the ready line (one a caller wrote itself) is looked for with `top` after this. */
const POLL_AFTER_MS = 1_000;

/**
 * The keep-alive runs the root setup, prints KEEP_ALIVE_READY and execs `sleep infinity` (or prints CHANNEL_READY
 * and execs its request loop: exec-channel.ts; then `channel` is true). Its output (keep-alive-stream.ts) tells seed
 * the setup is done in one engine call instead of a `top` poll; a setup that failed ends the container and the
 * stream, and its log becomes the seed failure. A keep-alive without the line, or an engine whose log driver replays
 * nothing, is still seen by `top` (waitForSleep).
 */
export async function waitForReady(attached: KeepAliveStream | undefined, container: Docker.Container, name: string): Promise<{ channel: boolean }> {
  const seen = attached ? await within(attached.ready, POLL_AFTER_MS) : undefined;
  if (seen === 'ready' || seen === 'channel') return { channel: seen === 'channel' };
  await waitForSleep(container, name);
  // Slow to print it (a loaded machine): the loop's ready line is written before the loop runs, so it is on its way.
  return { channel: attached !== undefined && (await within(attached.ready, POLL_AFTER_MS)) === 'channel' };
}

/** A started container's keep-alive (a Compose group's main): attached with what it already wrote, then let go. */
export async function waitForKeepAlive(container: Docker.Container, name: string): Promise<void> {
  // Unattachable: the poll says what is wrong.
  const attached = await KeepAliveStream.attach(container, { stdin: false, logs: true }).catch(() => undefined);
  try {
    await waitForReady(attached, container, name);
  } finally {
    attached?.close();
  }
}

async function within<T>(p: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([p, new Promise<undefined>((resolve) => { timer = setTimeout(() => resolve(undefined), ms); })]);
  } finally {
    clearTimeout(timer);
  }
}

/** Watches for the keep-alive's `sleep infinity` (or its request loop) through the engine's `top` (a host-side ps, no exec). */
async function waitForSleep(container: Docker.Container, name: string): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  for (let attempt = 0; ; attempt++) {
    let top: { Processes?: string[][] };
    try {
      top = (await container.top({ ps_args: '-o pid,args' })) as { Processes?: string[][] };
    } catch (err) {
      if ((err as { statusCode?: number }).statusCode === 409) throw await setupFailure(container, name, err);
      throw asSandboxError(name, err);
    }
    if (top.Processes?.some((p) => p[p.length - 1] === 'sleep infinity' || p[p.length - 1]!.endsWith(` ${CHANNEL_PROCESS}`))) return;
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
