import type Docker from 'dockerode';
import { setTimeout as sleep } from 'node:timers/promises';
import { asSandboxError, SandboxLost, SeedFailed } from '../errors.ts';
import { KEEP_ALIVE_READY } from '../seed-scripts.ts';
import { CHANNEL_PROCESS, CHANNEL_READY } from './exec-channel.ts';

const READY_TIMEOUT_MS = 60_000;
/** A keep-alive that never prints the ready line (one a caller wrote itself) is looked for with `top` after this. */
const POLL_AFTER_MS = 1_000;
const TAIL_BYTES = 4096;

/**
 * The keep-alive runs the root setup, prints KEEP_ALIVE_READY and execs `sleep infinity` (or prints CHANNEL_READY
 * and execs its request loop: exec-channel.ts; then `channel` is true). Its output, attached
 * with what it already wrote (`logs`), tells seed the setup is done in one engine call instead of a `top` poll; a
 * setup that failed ends the container and the stream, and its output becomes the seed failure. A keep-alive
 * without the line, or an engine whose log driver replays nothing, is still seen by `top` (waitForSleep).
 */
export async function waitForKeepAlive(container: Docker.Container, name: string): Promise<{ channel: boolean }> {
  const seen = await readyOnOutput(container);
  if (seen === 'ready' || seen === 'channel') return { channel: seen === 'channel' };
  // Seen by `top` only: whether its loop serves requests is not known, so its commands go through exec.
  await waitForSleep(container, name);
  return { channel: false };
}

async function readyOnOutput(container: Docker.Container): Promise<'ready' | 'channel' | 'ended' | 'unknown'> {
  let stream: NodeJS.ReadableStream & { destroy(): void };
  try {
    stream = (await container.attach({ stream: true, logs: true, stdout: true, stderr: false })) as unknown as typeof stream;
  } catch {
    return 'unknown'; // the poll below says what is wrong
  }
  let timer: NodeJS.Timeout | undefined;
  try {
    return await new Promise((resolve) => {
      let tail = '';
      timer = setTimeout(() => resolve('unknown'), POLL_AFTER_MS);
      stream.on('data', (chunk: Buffer) => {
        // The line is one write, so one frame: it never straddles a frame header.
        tail = (tail + chunk.toString('latin1')).slice(-TAIL_BYTES);
        if (tail.includes(CHANNEL_READY)) resolve('channel');
        else if (tail.includes(KEEP_ALIVE_READY)) resolve('ready');
      });
      stream.on('end', () => resolve('ended'));
      stream.on('close', () => resolve('ended'));
      stream.on('error', () => resolve('ended'));
    });
  } finally {
    clearTimeout(timer);
    stream.destroy();
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
