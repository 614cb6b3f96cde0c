// How an exec in a pod says it never started its command. The argv is Berth's launcher (pod-spec.ts execArgv):
//   [runuser -u name [-g group] -- | sh -c NUMERIC_USER_SCRIPT berth-user uid gid] sh -c CHDIR_SCRIPT workdir [env K=V…] [timeout …] argv…
// so a start fails as one of those programs says it: the runtime refusing the first program (a failed status, not
// an exit), runuser finding no such user or group (exit 1), the cd failing (exit 125), or sh, env or timeout not
// finding the next program (exit 127, or 126 when it is not runnable). Read here and nowhere above the driver.
import type { V1Status } from '@kubernetes/client-node';
import { envList, startText, type RawExecOptions } from '../exec.ts';
import type { ExecNotStarted } from '../types.ts';
import { CHDIR_SCRIPT, NUMERIC_USER_SCRIPT } from './pod-spec.ts';

type Answer = { exitCode: number; stdout: string; stderr: string };
type Launched = Pick<RawExecOptions, 'argv' | 'env' | 'timeoutSec'>;

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The ways sh, env and timeout (GNU or busybox) say they could not run `program`. */
function couldNotRun(program: string): RegExp {
  const p = escape(program);
  return new RegExp(
    `(^|: )exec: (line \\d+: )?${p}: (not found|Permission denied)$|^env: (['‘]${p}['’]|can't execute '${p}'): |^timeout: (failed to run command|can't execute) '${p}'`,
  );
}

/** The programs the launcher runs one after another: each one's failure to run the next is a start failure. */
function launched(launcher: readonly string[], o: Launched): string[] {
  return [
    ...(launcher[2] === NUMERIC_USER_SCRIPT ? ['setpriv'] : []),
    ...(envList(o.env) ? ['env'] : []),
    ...(o.timeoutSec !== undefined && o.timeoutSec > 0 ? ['timeout'] : []),
    ...(o.argv[0] !== undefined ? [o.argv[0]] : []),
  ];
}

/** The start failure an exec's exit reports, or undefined when its command ran (`o`: the exec's options, `launcher` the argv made of them). */
export function podNotStarted(launcher: readonly string[], o: Launched, r: Answer): ExecNotStarted | undefined {
  const line = r.stderr.trim();
  if (r.stdout !== '' || line === '' || line.includes('\n')) return undefined;
  const text = startText(r);
  if (r.exitCode === 1 && launcher[0] === 'runuser' && /^runuser: (user|group) .* does not exist/.test(line)) return { reason: 'no-user', text };
  if (r.exitCode === 125 && launcher.includes(CHDIR_SCRIPT) && /\bcd: .*(can't cd to|No such file or directory|Not a directory)/.test(line)) {
    return { reason: 'no-workdir', text };
  }
  if (r.exitCode !== 126 && r.exitCode !== 127) return undefined;
  const program = launched(launcher, o).find((p) => couldNotRun(p).test(line));
  return program !== undefined ? { reason: 'no-program', program, text } : undefined;
}

/** A failed status that is not the command's exit, when it says the runtime could not start the launcher's first program. */
export function podRefusedStart(launcher: readonly string[], status: V1Status): ExecNotStarted | undefined {
  const text = (status.message ?? '').trim();
  if (!/executable file not found|no such file or directory|permission denied/i.test(text)) return undefined;
  const program = /exec: "([^"\n]+)"/.exec(text)?.[1] ?? launcher[0];
  return program !== undefined ? { reason: 'no-program', program, text } : { reason: 'refused', text };
}
