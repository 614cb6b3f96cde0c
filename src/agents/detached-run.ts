// Runs one long agent process detached inside the sandbox (docs/design.md section 3, Surviving restarts): a retried
// turn with the same key finds the marker and re-attaches instead of starting the process a second time.
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { DETACHED_BASE, DetachedProcessLost, inlineWriteScript, shellQuote, type DetachedOutput, type DetachedResult, type UploadEntry } from '../sandbox/index.ts';
import type { AgentTurnContext } from './types.ts';
import { SANDBOX_LAYOUT } from '../task/index.ts';
import { HELD_BACKSTOP_SEC, MovingDeadline } from './moving-deadline.ts';

export interface DetachedRunOptions {
  /** Namespaces the marker, e.g. 'oracle' → `oracle-<runKey>`. */
  prefix: string;
  command: string;
  env: Record<string, string>;
  /** Inside the container: receives the process's combined stdout and stderr. */
  outputPath: string;
  /** Files uploaded (before the claim) to a fresh folder that `prepare` finds in $BERTH_STAGE. */
  stage?: string | UploadEntry[];
  /**
   * Shell run as root, once, only when this turn's process was never started (files to place, stale files
   * to clear); it runs under `set -e` in the same exec as the claim and, for a root process, the start.
   */
  prepare?: string;
  /** Return the output file's last bytes with the exit (saves a read afterwards). */
  tailBytes?: number;
}

export interface DetachedRunResult {
  /** Null when the process's end went unrecorded (`lost`). */
  exitCode: number | null;
  timedOut: boolean;
  /**
   * The process ended unrecorded, the sandbox still answering: something inside it killed the process's wrapper or
   * removed its marker (the agent, or a process it left). The turn ends there and is verified, as Harbor verifies
   * after an agent whose exec ended however it did; never a retried turn or a masked row.
   */
  lost?: string;
  /** True when an earlier attempt had already started the process. */
  reattached: boolean;
  /** When tailBytes was asked for and could be read along with the exit. */
  output?: DetachedOutput;
}

const POLL_MS = 500;
/** Longest wait without a heartbeat with details. */
const WAIT_CAP_MS = 10_000;
/** Berth's own, outside /logs: an earlier turn's agent may have removed or replaced anything there. */
const STAGING = `${SANDBOX_LAYOUT.berthState}/stage`;
/** How long an attempt waits for another attempt's start before taking the turn over (that one died mid-prepare). */
export const CLAIM_PATIENCE_MS = 120_000;

export function detachedKey(prefix: string, runKey: string): string {
  return `${prefix}-${runKey}`.replace(/[^A-Za-z0-9_.-]/g, '_');
}

/*
 * Preparing a turn (placing files, clearing the previous turn's) must happen once, before the start: two
 * attempts running at once (an attempt presumed dead by its heartbeat timeout is still running) would
 * otherwise clear each other's files. The first attempt claims the key with an atomic mkdir (in the same
 * exec that prepares and, for a root process, starts and briefly waits); any other waits for the process to
 * start and re-attaches.
 */
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
  // A folder of this attempt's own, so attempts running at once never share staged files.
  const stageDir = opts.stage !== undefined ? `${STAGING}/${key}-${randomBytes(4).toString('hex')}` : undefined;
  // Small stages are written by the prepare script itself (no archive request); larger ones are uploaded first.
  const inline = stageDir !== undefined ? await inlineWriteScript(opts.stage!, stageDir) : null;
  if (stageDir !== undefined && inline === null) await ctx.provider.upload(ctx.handle, opts.stage!, stageDir);
  const prepare = inline !== null ? `${inline}\n${opts.prepare ?? ''}` : opts.prepare;
  const launch = {
    key,
    command: opts.command,
    user: ctx.user,
    workdir: ctx.workdir,
    env: opts.env,
    // A budget moved on by a drain is kept from outside; the timeout inside is then only a backstop.
    timeoutSec: ctx.heldMs ? ctx.timeoutSec + HELD_BACKSTOP_SEC : ctx.timeoutSec,
    outputPath: opts.outputPath,
    ...(prepare !== undefined ? { prepareScript: prepare } : {}),
    ...(stageDir !== undefined ? { stageDir } : {}),
    ...(opts.tailBytes !== undefined ? { tailBytes: opts.tailBytes } : {}),
  };
  const deadline = ctx.heldMs ? new MovingDeadline(ctx, key, ctx.heldMs) : undefined;
  try {
    return await launchAndWait(ctx, opts, key, launch, stageDir, inline !== null, deadline);
  } catch (err) {
    if (!(err instanceof DetachedProcessLost)) throw err;
    return { exitCode: null, timedOut: false, reattached: false, lost: err.message };
  } finally {
    await deadline?.stop();
  }
}

async function launchAndWait(
  ctx: AgentTurnContext, opts: DetachedRunOptions, key: string, launch: Parameters<AgentTurnContext['provider']['launchDetached']>[1],
  stageDir: string | undefined, inlined: boolean, deadline?: MovingDeadline,
): Promise<DetachedRunResult> {
  let res = await ctx.provider.launchDetached(ctx.handle, launch);
  if (res.state === 'claimed_by_other') {
    if (await waitForStart(ctx, key, opts.prefix)) {
      if (stageDir !== undefined && !inlined) await ctx.provider.exec(ctx.handle, { command: `rm -rf ${shellQuote(stageDir)}`, user: 'root', workdir: '/' });
      res = { state: 'exists', dir: res.dir };
    } else {
      res = await ctx.provider.launchDetached(ctx.handle, { ...launch, claim: false });
    }
  }
  const reattached = res.state !== 'started';
  if (!res.done) await deadline?.attached(reattached);
  let done: DetachedResult;
  try {
    done = res.done ?? await ctx.provider.waitDetached(ctx.handle, key, {
      pollMs: WAIT_CAP_MS,
      outputPath: opts.outputPath,
      signal: ctx.signal,
      onPoll: ({ elapsedMs }) => ctx.heartbeat({ phase: opts.prefix, key, elapsedMs }),
      ...(opts.tailBytes !== undefined ? { tailBytes: opts.tailBytes } : {}),
    });
  } catch (err) {
    if (!(err instanceof DetachedProcessLost)) throw err;
    return { exitCode: null, timedOut: false, reattached, lost: err.message };
  }
  return { exitCode: done.exitCode, timedOut: done.timedOut, reattached, ...(done.output !== undefined ? { output: done.output } : {}) };
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
