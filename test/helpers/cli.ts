import { spawn } from 'node:child_process';
import { join } from 'node:path';

export const repoRoot = join(import.meta.dirname, '..', '..');

export interface CliResult { code: number; stdout: string; stderr: string }

/** Runs the real `berth` bin in a child process. */
export function berth(args: string[], env: NodeJS.ProcessEnv = {}, timeoutMs = 180_000, cwd = repoRoot): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(repoRoot, 'bin', 'berth.mjs'), ...args], {
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
