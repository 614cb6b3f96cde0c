// How the Docker engine says an exec never started its command: exit 126 or 127, the reason on the exec's own output
// (runc's "OCI runtime exec failed: …", or the engine's own "unable to find user …"). Read here and nowhere above the
// driver: callers see ExecResult.notStarted.
import { startText, timeoutCouldNotRun } from '../exec.ts';
import type { ExecNotStarted } from '../types.ts';

const RUNTIME_REFUSED = /OCI runtime exec failed/i;
const NO_USER = /unable to find (user|group) [^\n]*: no matching entries in (passwd|group)/i;
const NO_WORKDIR = /chdir to cwd/i;
const NO_PROGRAM = /exec: "([^"\n]+)": (executable file not found|stat |permission denied|no such file or directory)/i;

/** The start failure a Docker exec's answer reports, or undefined when its command ran (argv: before withTimeout). */
export function dockerNotStarted(
  argv: readonly string[],
  timeoutSec: number | undefined,
  r: { exitCode: number; stdout: string; stderr: string },
): ExecNotStarted | undefined {
  if (r.exitCode !== 126 && r.exitCode !== 127) return undefined;
  const text = startText(r);
  if (NO_USER.test(text)) return { reason: 'no-user', text };
  if (RUNTIME_REFUSED.test(text)) {
    if (NO_WORKDIR.test(text)) return { reason: 'no-workdir', text };
    const program = NO_PROGRAM.exec(text)?.[1];
    return program !== undefined ? { reason: 'no-program', program, text } : { reason: 'refused', text };
  }
  return timeoutCouldNotRun(argv, timeoutSec, r);
}
