// Harbor 0.25 itself, from the private venv the setup makes (scripts/setup.sh, harbor): its models read what Berth
// writes, and `harbor view` serves it.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { createServer } from 'node:net';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** LiteLLM (in Harbor) would fetch its model price list from the network at start: its packaged copy instead. */
export const harborEnv = (): NodeJS.ProcessEnv => ({ ...process.env, LITELLM_LOCAL_MODEL_COST_MAP: 'True' });

export const harborVenv = (): string => join(process.env.BERTH_HOME ?? join(homedir(), '.berth'), 'tools', 'harbor-venv');

function harborBin(name: string): string {
  const bin = join(harborVenv(), 'bin', name);
  if (!existsSync(bin)) throw new Error(`${bin} is missing: run \`npm run setup\` (it installs harbor 0.25.0 into ${harborVenv()})`);
  return bin;
}

export interface HarborRead {
  job_name: string;
  n_attempts: number;
  n_total_trials: number;
  stats: {
    n_completed_trials: number; n_errored_trials: number; n_retries: number; n_pending_trials: number; n_running_trials: number;
    evals: Record<string, { n_trials: number; n_errors: number; metrics: Array<Record<string, number>>; exception_stats: Record<string, string[]>; reward_stats: Record<string, Record<string, string[]>>; pass_at_k: Record<string, number> }>;
    n_input_tokens: number | null;
  };
  trials: Array<{ name: string; task_name: string; rewards: Record<string, number> | null; exception_type: string | null; steps: string[] | null; trajectories: string[]; config_trial_name: string; tokens: Array<number | null> }>;
  errors: string[];
}

/** The job directory as Harbor's models read it (test/harbor-job/validate_job.py); a refused file fails here. */
export async function readWithHarbor(jobDir: string): Promise<HarborRead> {
  const script = join(import.meta.dirname, '..', 'harbor-job', 'validate_job.py');
  const { stdout } = await run(harborBin('python'), [script, jobDir], { maxBuffer: 64 * 1024 * 1024, env: harborEnv() }).catch((err: { stdout?: string; stderr?: string }) => {
    throw new Error(`Harbor's models refused ${jobDir}:\n${err.stdout ?? ''}\n${err.stderr ?? ''}`);
  });
  return JSON.parse(stdout) as HarborRead;
}

/** `harbor task migrate`: Harbor's Terminal-Bench mapper converts the task folders under `input` into `output`. */
export async function migrateWithHarbor(input: string, output: string, extra: readonly string[] = []): Promise<void> {
  await run(harborBin('harbor'), ['task', 'migrate', '-i', input, '-o', output, ...extra], { env: harborEnv() }).catch((err: { stdout?: string; stderr?: string }) => {
    throw new Error(`harbor task migrate failed:\n${err.stdout ?? ''}\n${err.stderr ?? ''}`);
  });
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

export interface HarborView { url: string; child: ChildProcess; output: () => string; stop(): Promise<void> }

/** `harbor view FOLDER` on a free port of 127.0.0.1, once its API answers. */
export async function startHarborView(folder: string): Promise<HarborView> {
  const port = await freePort();
  const child = spawn(harborBin('harbor'), ['view', folder, '--port', String(port), '--host', '127.0.0.1'], { stdio: ['ignore', 'pipe', 'pipe'], detached: true, env: harborEnv() });
  let out = '';
  child.stdout!.on('data', (d) => { out += d; });
  child.stderr!.on('data', (d) => { out += d; });
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    const ok = await fetch(`${url}/api/health`).then((r) => r.ok, () => false);
    if (ok) break;
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`harbor view did not answer at ${url}:\n${out}`);
    await new Promise((r) => setTimeout(r, 300));
  }
  return {
    url, child, output: () => out,
    async stop() {
      if (child.exitCode !== null) return;
      try { process.kill(-child.pid!, 'SIGTERM'); } catch { /* gone */ }
      await new Promise((r) => { child.once('exit', r); setTimeout(r, 5000); });
    },
  };
}
