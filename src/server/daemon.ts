import { spawn } from 'node:child_process';
import { openSync, closeSync, readFileSync, writeFileSync, existsSync, rmSync } from 'node:fs';
import { alive } from '../config/process.ts';

/**
 * Starts a daemon in its own session with no inherited descriptors (docs/design.md section 5, Daemons),
 * so whatever waits on our output (a CI runner, a pipe) never waits on it.
 */
export function spawnDetached(command: string, args: string[], opts: { log: string; pidFile: string; env?: NodeJS.ProcessEnv; cwd?: string }): number {
  const out = openSync(opts.log, 'a');
  try {
    const child = spawn(command, args, {
      detached: true,
      stdio: ['ignore', out, out],
      env: opts.env ?? process.env,
      cwd: opts.cwd,
    });
    if (child.pid === undefined) throw new Error(`could not start ${command}`);
    child.unref();
    writeFileSync(opts.pidFile, `${child.pid}\n`);
    return child.pid;
  } finally {
    closeSync(out);
  }
}

export function readPid(pidFile: string): number | undefined {
  if (!existsSync(pidFile)) return undefined;
  const pid = Number(readFileSync(pidFile, 'utf8').trim());
  return Number.isInteger(pid) && pid > 0 ? pid : undefined;
}


/** SIGTERM the process group, then SIGKILL if it is still there after graceMs. */
export async function stopPid(pidFile: string, graceMs = 10_000): Promise<boolean> {
  const pid = readPid(pidFile);
  if (!alive(pid)) {
    rmSync(pidFile, { force: true });
    return false;
  }
  const signal = (sig: NodeJS.Signals) => {
    try {
      process.kill(-pid, sig);
    } catch {
      try { process.kill(pid, sig); } catch { /* already gone */ }
    }
  };
  signal('SIGTERM');
  const deadline = Date.now() + graceMs;
  while (alive(pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  if (alive(pid)) signal('SIGKILL');
  rmSync(pidFile, { force: true });
  return true;
}

export function tail(file: string, lines = 20): string {
  if (!existsSync(file)) return '(no log)';
  return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
}
