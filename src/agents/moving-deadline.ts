// An installed agent's time limit in training mode (issue 41, Policy versions and weight sync): the agent has its
// turn's budget of its own time, and the time its model calls wait at the gateway while the trainer drains is not
// its own. A `timeout` inside the sandbox cannot know of a drain, so the limit is kept from outside: while the turn
// waits, it looks every second, and once the budget (moved on by the held time) is spent it marks the process timed
// out and stops it, as `timeout` would have. The `timeout` inside stays, an hour later, for a turn whose worker is gone.
import { setTimeout as sleep } from 'node:timers/promises';
import { DETACHED_BASE, shellQuote } from '../sandbox/index.ts';
import type { AgentTurnContext } from './types.ts';

export { HELD_BACKSTOP_SEC } from '../outcomes/turn-limits.ts';
/** Between TERM and KILL, as `timeout -k` gives. */
const KILL_AFTER_MS = 5000;
const LOOK_MS = 1000;

/**
 * Ends the agent's processes (everything in the detached process's session but its wrapper and `timeout`), so the
 * wrapper records the exit as the agent's own and the wait returns.
 */
export function stopScript(key: string, signal: 'TERM' | 'KILL' = 'TERM'): string {
  const d = shellQuote(`${DETACHED_BASE}/${key}`);
  return `sid=$(cat ${d}/pid 2>/dev/null) || exit 0
for p in /proc/[0-9]*; do
  n=\${p#/proc/}; [ "$n" = "$sid" ] && continue
  st=$(sed 's/^.*) //' "$p/stat" 2>/dev/null) || continue
  [ "$(echo "$st" | cut -d' ' -f4)" = "$sid" ] || continue
  [ "$(cat "$p/comm" 2>/dev/null)" = timeout ] && continue
  kill -${signal} "$n" 2>/dev/null
done
exit 0`;
}

/** Marks the process timed out (what its wrapper writes when `timeout` ends it), then stops it. */
export function timeOutScript(key: string): string {
  const d = shellQuote(`${DETACHED_BASE}/${key}`);
  return `[ -f ${d}/exit ] && exit 0\n: > ${d}/timed_out\n${stopScript(key)}`;
}

/** Seconds since the detached process started, by the sandbox's clock (its command file is written at the start). */
export function ageScript(key: string): string {
  const d = shellQuote(`${DETACHED_BASE}/${key}`);
  return `s=$(stat -c %Y ${d}/command.sh 2>/dev/null) && echo $(( $(date +%s) - s ))`;
}

/** Whether a turn that started at `startedAt` with `budgetSec` of its own time has spent it. */
export function overdue(t: { startedAt: number; budgetSec: number; heldMs: number; now: number }): boolean {
  return t.now - t.startedAt > t.budgetSec * 1000 + t.heldMs;
}

/** Keeps one detached process's moving time limit while the turn waits for it. */
export class MovingDeadline {
  private startedAt: number;
  private readonly stopped = new AbortController();
  private looking: Promise<void> | undefined;
  /** Set once the limit passed and the process was told to stop. */
  ended = false;

  constructor(private readonly ctx: AgentTurnContext, private readonly key: string, private readonly heldMs: () => number) {
    this.startedAt = Date.now();
  }

  /** Called once the process runs: a re-attached one started earlier, as its marker says. */
  async attached(reattached: boolean): Promise<void> {
    if (reattached) {
      const res = await this.ctx.provider.exec(this.ctx.handle, { command: ageScript(this.key), user: 'root', workdir: '/', timeoutSec: 60 });
      const age = Number(res.stdout.trim());
      if (res.exitCode === 0 && Number.isFinite(age) && age >= 0) this.startedAt = Date.now() - age * 1000;
    }
    this.looking = this.look().catch(() => undefined);
  }

  private async look(): Promise<void> {
    const signal = this.stopped.signal;
    while (!signal.aborted) {
      await sleep(LOOK_MS, undefined, { signal }).catch(() => undefined);
      if (signal.aborted) return;
      if (!overdue({ startedAt: this.startedAt, budgetSec: this.ctx.timeoutSec, heldMs: this.heldMs(), now: Date.now() })) continue;
      this.ended = true;
      await this.run(timeOutScript(this.key));
      await sleep(KILL_AFTER_MS, undefined, { signal }).catch(() => undefined);
      if (!signal.aborted) await this.run(stopScript(this.key, 'KILL'));
      return;
    }
  }

  private async run(command: string): Promise<void> {
    await this.ctx.provider.exec(this.ctx.handle, { command, user: 'root', workdir: '/', timeoutSec: 30 }).catch(() => undefined);
  }

  /** The wait is over: no more looks. */
  async stop(): Promise<void> {
    this.stopped.abort();
    await this.looking;
  }
}
