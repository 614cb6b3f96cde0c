// CPU-seconds of the processes an episode costs, read from /proc: the worker, the Temporal server, the engine
// (dockerd and containerd), this benchmark (the client), and the rest of the machine's busy time (short-lived
// processes such as execs, runc and shims that exit between samples, and kernel work).
import { readdirSync, readFileSync } from 'node:fs';
import type { CpuSample } from './attribution.ts';

const TICK = 100; // USER_HZ on Linux (getconf CLK_TCK)

/** utime + stime + cutime + cstime of one process, in seconds (0 when it is gone). */
export function processCpu(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14])) / TICK;
  } catch {
    return 0;
  }
}

/** The machine's busy CPU-seconds, without niced time: a background build at `nice 19` is not an episode's cost. */
export function machineBusy(): number {
  const [, ...f] = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/);
  const [user, , system, , , irq, softirq, steal] = f.map(Number) as number[];
  return (user! + system! + irq! + softirq! + (steal ?? 0)) / TICK;
}

function pidsWhere(test: (comm: string, cmdline: string) => boolean): number[] {
  const out: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const comm = readFileSync(`/proc/${name}/comm`, 'utf8').trim();
      const cmdline = readFileSync(`/proc/${name}/cmdline`, 'utf8').replace(/\0/g, ' ');
      if (test(comm, cmdline)) out.push(Number(name));
    } catch { /* gone */ }
  }
  return out;
}

export interface CpuGroups { worker: number[]; temporal: number[]; engine: number[] }

export function findGroups(workerPid: number): CpuGroups {
  return {
    worker: [workerPid],
    temporal: pidsWhere((comm, cmd) => comm === 'temporal' || /temporal.*server start-dev/.test(cmd)),
    engine: pidsWhere((comm) => comm === 'dockerd' || comm === 'containerd'),
  };
}

export function sampleCpu(groups: CpuGroups): CpuSample {
  const sum = (pids: number[]) => pids.reduce((s, p) => s + processCpu(p), 0);
  const worker = sum(groups.worker);
  const temporal = sum(groups.temporal);
  const engine = sum(groups.engine);
  const own = process.cpuUsage();
  const client = (own.user + own.system) / 1e6;
  const busy = machineBusy();
  return { at: Date.now(), cpu: { worker, temporal, engine, client, 'short-lived': busy - worker - temporal - engine - client } };
}
