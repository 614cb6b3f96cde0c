// What several benchmarks share: a trivial oracle dataset and a detached worker on queues of its own.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { constants, tmpdir } from 'node:os';
import { join } from 'node:path';
import { WORKER_NODE_FLAGS } from '../src/server/worker-daemon.ts';

export const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/**
 * The trivial agent's command: writes ok to out.txt, after waiting `agentSec` seconds when asked (what a model
 * call's latency looks like to the host: the sandbox idle while the agent waits).
 */
export const solveScript = (agentSec = 0): string => `${agentSec > 0 ? `sleep ${agentSec}\n` : ''}echo ok > out.txt\n`;

/** `count` tasks that write ok to a file and check it; `steps` > 1 makes each a multi-step task; `agentSec` as in solveScript. */
export function trivialDataset(count: number, steps = 1, agentSec = 0): string {
  const root = mkdtempSync(join(tmpdir(), 'berth-bench-'));
  for (let i = 0; i < count; i++) {
    const dir = join(root, `t${i}`);
    const toml = ['[environment]', 'docker_image = "berth-base:bookworm"', 'workdir = "/app"'];
    if (steps > 1) for (let s = 1; s <= steps; s++) toml.push('[[steps]]', `name = "s${s}"`);
    mkdirSync(join(dir, 'solution'), { recursive: true });
    mkdirSync(join(dir, 'tests'), { recursive: true });
    writeFileSync(join(dir, 'task.toml'), `${toml.join('\n')}\n`);
    writeFileSync(join(dir, 'instruction.md'), 'Write ok to out.txt\n');
    writeFileSync(join(dir, 'solution', 'solve.sh'), solveScript(agentSec));
    writeFileSync(join(dir, 'tests', 'test.sh'), 'grep -q ok /app/out.txt && echo 1 > /logs/verifier/reward.txt\n');
    for (let s = 1; steps > 1 && s <= steps; s++) {
      mkdirSync(join(dir, 'steps', `s${s}`), { recursive: true });
      writeFileSync(join(dir, 'steps', `s${s}`, 'instruction.md'), 'Write ok to out.txt\n');
    }
  }
  return root;
}

/** A detached worker on its own queues (no janitor: other runs on this machine may have sandboxes of their own). */
export function startWorker(queue: string, opts: { slots?: number; env?: Record<string, string> } = {}) {
  const child = spawn(process.execPath, [...WORKER_NODE_FLAGS, join(import.meta.dirname, '..', 'bin', 'berth.mjs'), 'worker'], {
    env: {
      ...process.env, BERTH_DETACHED_WORKER: '1', BERTH_TASK_QUEUE: queue, BERTH_HOST_QUEUE_SUFFIX: queue,
      BERTH_WORKER_SLOTS: String(opts.slots ?? 64), BERTH_JANITOR_AT_START: '0', ...opts.env,
    },
    stdio: 'ignore',
  });
  stopWithBench(child);
  const peakRssMb = () => {
    const status = readFileSync(`/proc/${child.pid}/status`, 'utf8');
    return Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
  };
  return { child, peakRssMb };
}

/**
 * A benchmark stopped from outside (its shell closed, ^C, kill) takes its worker with it: left alone, the worker would
 * go on running the batches under way and load the machine for whatever is measured next.
 */
function stopWithBench(child: ChildProcess): void {
  // Once: a second SIGTERM would cut short the worker's drain.
  const stop = () => { if (!child.killed && child.exitCode === null) child.kill('SIGTERM'); };
  process.once('exit', stop);
  for (const signal of ['SIGHUP', 'SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      stop();
      process.exit(128 + constants.signals[signal]);
    });
  }
}
