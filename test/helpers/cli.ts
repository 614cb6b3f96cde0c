import { spawn } from 'node:child_process';
import { join } from 'node:path';

export const repoRoot = join(import.meta.dirname, '..', '..');

export interface CliResult { code: number; stdout: string; stderr: string }

/**
 * `argv` in a mount namespace of its own where each of `hidden` is an empty tmpfs: another machine, which has none of
 * those files. unshare and sh exec (no fork), so the process is `argv` itself (its pid, kill -9).
 */
export function hidingArgv(hidden: readonly string[], argv: readonly string[]): string[] {
  if (hidden.length === 0) return [...argv];
  return [
    'unshare', '--mount', '--propagation', 'private', 'sh', '-c',
    'n=$1; shift; i=0; while [ $i -lt $n ]; do mount -t tmpfs berth-hidden "$1" || exit 1; shift; i=$((i+1)); done; exec "$@"',
    'berth-hide', String(hidden.length), ...hidden, ...argv,
  ];
}

/** Runs the real `berth` bin in a child process (that cannot see the folders `hidden` names). */
export function berth(args: string[], env: NodeJS.ProcessEnv = {}, timeoutMs = 180_000, cwd = repoRoot, hidden: readonly string[] = []): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const [cmd, ...argv] = hidingArgv(hidden, [process.execPath, join(repoRoot, 'bin', 'berth.mjs'), ...args]);
    const child = spawn(cmd!, argv, {
      cwd, env: { ...process.env, ...env, NO_COLOR: '1' }, stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => { stdout += d; });
    child.stderr.on('data', (d) => { stderr += d; });
    const timer = setTimeout(() => { child.kill('SIGKILL'); reject(new Error(`berth ${args.join(' ')} timed out\n${stdout}\n${stderr}`)); }, timeoutMs);
    child.on('close', (code) => { clearTimeout(timer); resolve({ code: code ?? -1, stdout, stderr }); });
  });
}
