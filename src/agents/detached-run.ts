// Runs one long agent process detached inside the sandbox (DESIGN.md §3, Surviving restarts): a retried
// turn with the same key finds the marker and re-attaches instead of starting the process a second time.
import { DETACHED_BASE, shellQuote } from '../sandbox/index.ts';
import type { AgentTurnContext } from './types.ts';

export interface DetachedRunOptions {
  /** Namespaces the marker, e.g. 'oracle' → `oracle-<runKey>`. */
  prefix: string;
  command: string;
  env: Record<string, string>;
  /** Inside the container: receives the process's combined stdout and stderr. */
  outputPath: string;
  /** Runs only when this turn's process was never started (files to place, stale files to clear). */
  prepare?: () => Promise<void>;
}

export interface DetachedRunResult {
  exitCode: number;
  timedOut: boolean;
  /** True when an earlier attempt had already started the process. */
  reattached: boolean;
}

const POLL_MS = 500;

export function detachedKey(prefix: string, runKey: string): string {
  return `${prefix}-${runKey}`.replace(/[^A-Za-z0-9_.-]/g, '_');
}

export async function markerExists(ctx: AgentTurnContext, key: string): Promise<boolean> {
  const res = await ctx.provider.exec(ctx.handle, {
    command: `test -d ${shellQuote(`${DETACHED_BASE}/${key}`)}`,
    user: 'root',
    workdir: '/',
    timeoutSec: 60,
  });
  return res.exitCode === 0;
}

export async function runDetached(ctx: AgentTurnContext, opts: DetachedRunOptions): Promise<DetachedRunResult> {
  const key = detachedKey(opts.prefix, ctx.runKey);
  let reattached = await markerExists(ctx, key);
  if (!reattached) {
    await opts.prepare?.();
    const start = await ctx.provider.startDetached(ctx.handle, {
      key,
      command: opts.command,
      user: ctx.user,
      workdir: ctx.workdir,
      env: opts.env,
      timeoutSec: ctx.timeoutSec,
      outputPath: opts.outputPath,
    });
    reattached = !start.started;
  }
  const done = await ctx.provider.waitDetached(ctx.handle, key, {
    pollMs: POLL_MS,
    signal: ctx.signal,
    onPoll: ({ elapsedMs }) => ctx.heartbeat({ phase: opts.prefix, key, elapsedMs }),
  });
  return { exitCode: done.exitCode, timedOut: done.timedOut, reattached };
}

/** The last `bytes` bytes of a file in the sandbox, or '' when it does not exist. */
export async function readTail(ctx: AgentTurnContext, path: string, bytes: number): Promise<string> {
  const res = await ctx.provider.exec(ctx.handle, {
    command: `[ -f ${shellQuote(path)} ] && tail -c ${bytes} ${shellQuote(path)} || true`,
    user: 'root',
    workdir: '/',
    timeoutSec: 60,
    outputCapBytes: bytes + 1024,
  });
  return res.stdout;
}
