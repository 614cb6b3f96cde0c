// Runs one long agent process detached inside the sandbox (DESIGN.md §3, Surviving restarts): a retried
// turn with the same key finds the marker and re-attaches instead of starting the process a second time.
import { setTimeout as sleep } from 'node:timers/promises';
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
const CLAIMS = '/logs/agent/.berth-claims';
/** How long an attempt waits for another attempt's start before taking the turn over (that one died mid-prepare). */
export const CLAIM_PATIENCE_MS = 120_000;

export function detachedKey(prefix: string, runKey: string): string {
  return `${prefix}-${runKey}`.replace(/[^A-Za-z0-9_.-]/g, '_');
}

type ClaimState = 'started' | 'claimed' | 'claimed_by_other';

/*
 * Preparing a turn (placing files, clearing the previous turn's) must happen once, before the start: two
 * attempts running at once (an attempt presumed dead by its heartbeat timeout is still running) would
 * otherwise clear each other's files. The first attempt claims the key with an atomic mkdir; any other
 * waits for the process to start and re-attaches.
 */
async function claim(ctx: AgentTurnContext, key: string): Promise<ClaimState> {
  const marker = shellQuote(`${DETACHED_BASE}/${key}`);
  const mine = shellQuote(`${CLAIMS}/${key}`);
  const res = await ctx.provider.exec(ctx.handle, {
    command: [
      `if [ -d ${marker} ]; then echo started; exit 0; fi`,
      `mkdir -p -m 700 ${CLAIMS}`,
      `if mkdir ${mine} 2>/dev/null; then echo claimed; else echo claimed_by_other; fi`,
    ].join('\n'),
    user: 'root',
    workdir: '/',
    timeoutSec: 60,
  });
  const word = res.stdout.trim();
  if (res.exitCode !== 0 || !['started', 'claimed', 'claimed_by_other'].includes(word)) {
    throw new Error(`could not claim the turn "${key}" in ${ctx.handle.name} (exit ${res.exitCode}): ${res.stderr.trim() || word}`);
  }
  return word as ClaimState;
}

async function waitForStart(ctx: AgentTurnContext, key: string, phase: string): Promise<boolean> {
  const since = Date.now();
  while (Date.now() - since < CLAIM_PATIENCE_MS) {
    if (await markerExists(ctx, key)) return true;
    ctx.heartbeat({ phase, key, waitingForStart: true });
    await sleep(POLL_MS, undefined, { signal: ctx.signal });
  }
  return false;
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
  const state = await claim(ctx, key);
  let reattached = state !== 'claimed';
  if (state === 'claimed' || (state === 'claimed_by_other' && !(await waitForStart(ctx, key, opts.prefix)))) {
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
