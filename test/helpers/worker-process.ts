import { spawn, type ChildProcess } from 'node:child_process';
import { Client, Connection } from '@temporalio/client';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { temporalAddress } from '../../src/config/temporal.ts';
import { hidingArgv, repoRoot } from './cli.ts';

export interface WorkerProcess { child: ChildProcess; output: () => string; kill9(): void; stop(): Promise<void> }

export interface WorkerProcessOptions {
  /**
   * Folders this worker cannot see (an empty tmpfs over each, in a mount namespace of its own): another machine's
   * disk, so two workers on this machine share no storage.
   */
  hidden?: string[];
}

/** A real `berth worker` process on a test's own queues, so a test can kill -9 it. */
export function startWorkerProcess(env: Record<string, string>, opts: WorkerProcessOptions = {}): WorkerProcess {
  const [cmd, ...args] = hidingArgv(opts.hidden ?? [], [process.execPath, join(repoRoot, 'bin', 'berth.mjs'), 'worker']);
  const child = spawn(cmd!, args, {
    cwd: repoRoot, env: { ...process.env, BERTH_DETACHED_WORKER: '1', ...env }, stdio: ['ignore', 'pipe', 'pipe'], detached: true,
  });
  let out = '';
  child.stdout!.on('data', (d) => { out += d; });
  child.stderr!.on('data', (d) => { out += d; });
  const signal = (sig: NodeJS.Signals) => { try { process.kill(-child.pid!, sig); } catch { /* gone */ } };
  return {
    child,
    output: () => out,
    kill9: () => signal('SIGKILL'),
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      signal('SIGTERM');
      await new Promise((r) => { child.once('exit', r); setTimeout(r, 10_000); });
      signal('SIGKILL');
    },
  };
}

export async function waitUntil(check: () => Promise<boolean> | boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/**
 * Queues of a test's own for `berth worker` processes it starts and kills, against the shared dev server. Call
 * `stop()` in afterAll: it stops every worker started and closes the client's connection.
 */
export function ownWorkerQueues(name: string) {
  const suffix = `${name}-${randomBytes(3).toString('hex')}`;
  const env = { BERTH_TASK_QUEUE: `test-${suffix}`, BERTH_HOST_QUEUE_SUFFIX: suffix, BERTH_HEARTBEAT_TIMEOUT_SEC: '6' };
  const workers: WorkerProcess[] = [];
  let connection: Connection | undefined;
  return {
    env,
    workers,
    startWorker(extra: Record<string, string> = {}, opts: WorkerProcessOptions = {}): WorkerProcess {
      const w = startWorkerProcess({ ...env, ...extra }, opts);
      workers.push(w);
      return w;
    },
    async client(): Promise<Client> {
      connection ??= await Connection.connect({ address: temporalAddress().address });
      return new Client({ connection });
    },
    async stop(): Promise<void> {
      for (const w of workers) await w.stop();
      await connection?.close();
    },
  };
}
