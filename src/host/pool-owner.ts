// Which worker process a warm pool's sandboxes belong to, and whether it still runs: `<hostname>:<pid>:<start>`, the
// start being the process's start time in the kernel's clock ticks since boot, so a pid reused by another process is
// not taken for the owner.
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';

function processStart(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Field 22; the command name (field 2, in parentheses) may hold spaces, so count from its closing parenthesis.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}

export const poolOwnerTag = (pid = process.pid): string => `${hostname()}:${pid}:${processStart(pid) ?? '?'}`;

/**
 * True when the process `tag` names runs on this machine. A tag from another machine (a shared BERTH_HOME) is taken
 * as live: only its own host can tell.
 */
export function poolOwnerLive(tag: string): boolean {
  const [host, pidText, start] = tag.split(':');
  if (host !== hostname()) return true;
  const pid = Number(pidText);
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  const now = processStart(pid);
  return start === '?' || now === undefined || now === start;
}
