import type { ExecOptions } from './types.ts';

export const DEFAULT_OUTPUT_CAP = 1024 * 1024;
/** Seconds between `timeout`'s TERM and its KILL. */
export const KILL_GRACE_SEC = 5;

/** ExecOptions with an argv instead of a bash command. */
export interface RawExecOptions extends Omit<ExecOptions, 'command'> {
  argv: string[];
  /** Aborting ends the wait for the output (the command itself is left to its own timeout). */
  signal?: AbortSignal;
}

export function envList(env: Record<string, string> | undefined): string[] | undefined {
  if (!env) return undefined;
  const list = Object.entries(env).map(([k, v]) => `${k}=${v}`);
  return list.length > 0 ? list : undefined;
}

/** argv wrapped so the budget is enforced inside the container, killing the whole process group. */
export function withTimeout(argv: string[], timeoutSec: number | undefined): string[] {
  if (timeoutSec === undefined || timeoutSec <= 0) return argv;
  return ['timeout', '-k', String(KILL_GRACE_SEC), String(timeoutSec), ...argv];
}
