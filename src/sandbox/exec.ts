import type { ExecNotStarted, ExecOptions } from './types.ts';

export const DEFAULT_OUTPUT_CAP = 1024 * 1024;
/** Seconds between `timeout`'s TERM and its KILL. */
export const KILL_GRACE_SEC = 5;
/** Extra host-side patience beyond the in-container budget before a runner gives up on a command's answer. */
export const HOST_GUARD_SEC = 20;

/** root or uid 0, with no other group: the user a process of Berth's own (a keep-alive, a launcher) runs as. */
export function isPlainRoot(user: string): boolean {
  return /^(root|0)(:(root|0))?$/.test(user);
}

/** Whether a command ended by its in-container budget: `timeout`'s 124, or its KILL (137) once the budget had passed. */
export function endedByTimeout(exitCode: number, elapsedSec: number, timeoutSec: number | undefined): boolean {
  return timeoutSec !== undefined && (exitCode === 124 || (exitCode === 137 && elapsedSec >= timeoutSec));
}

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

/**
 * `timeout` (coreutils' or busybox's) could not run the program withTimeout gave it: the command never started. Only
 * that program counts: a command that itself runs `timeout` on a program the image lacks ran, and failed.
 */
export function timeoutCouldNotRun(
  argv: readonly string[],
  timeoutSec: number | undefined,
  r: { exitCode: number; stdout: string; stderr: string },
): ExecNotStarted | undefined {
  const program = argv[0];
  if (timeoutSec === undefined || timeoutSec <= 0 || program === undefined) return undefined;
  if (r.exitCode !== 126 && r.exitCode !== 127) return undefined;
  const text = startText(r);
  const said = text.split('\n').some((line) => [`timeout: failed to run command '${program}'`, `timeout: can't execute '${program}'`].some((w) => line.startsWith(w)));
  return said ? { reason: 'no-program', program, text } : undefined;
}

/** A command's output as a start failure's text: both streams, trimmed. */
export function startText(r: { stdout: string; stderr: string }): string {
  return `${r.stdout}\n${r.stderr}`.trim();
}
