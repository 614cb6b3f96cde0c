// CPU-seconds by process while Kubernetes episodes run: the worker, the Temporal server, and the local cluster's
// daemons (apiserver, etcd, kubelet, its containerd, the pods' shims (their own time: what they reap ran in the pods),
// the controllers), what ran in the pods (the kubepods cgroup: containers and their execs), the
// benchmark itself, and the rest of the machine's busy time (runc's short-lived processes, and other sessions' work). Processes come
// and go (a shim per pod), so every sample looks them up again and keeps what a process that has gone last showed.
import { readdirSync, readFileSync } from 'node:fs';
import { machineBusy, processCpu } from './cpu.ts';

/** The group a process of the cluster belongs to, by its name and command line (undefined: not the cluster's). */
export function clusterGroup(comm: string, cmdline: string): string | undefined {
  if (comm === 'kube-apiserver') return 'apiserver';
  if (comm === 'etcd' && cmdline.includes('.berth/kubernetes')) return 'etcd';
  if (comm === 'kubelet') return 'kubelet';
  if (comm.startsWith('kube-controller') || comm === 'kube-scheduler') return 'controllers';
  if (comm === 'containerd' && cmdline.includes('.berth/kubernetes')) return 'containerd';
  if (comm.startsWith('containerd-shim') && cmdline.includes('.berth/kubernetes')) return 'shims';
  if (comm === 'temporal' || /temporal.*server start-dev/.test(cmdline)) return 'temporal';
  return undefined;
}

function ownCpu(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) / 100;
  } catch {
    return 0;
  }
}

/** CPU-seconds of everything that ran in the cluster's pods (their containers and what exec ran there): the kubepods cgroup (v1). */
function podsCpu(): number {
  try {
    return Number(readFileSync('/sys/fs/cgroup/cpuacct/kubepods/cpuacct.usage', 'utf8')) / 1e9;
  } catch {
    return 0;
  }
}

export class ClusterCpu {
  private readonly last = new Map<number, { group: string; cpu: number }>();
  private readonly start: Record<string, number>;

  constructor(private readonly workerPid: number) {
    this.start = this.totals();
  }

  private look(): void {
    for (const name of readdirSync('/proc')) {
      if (!/^\d+$/.test(name)) continue;
      const pid = Number(name);
      let group = this.last.get(pid)?.group;
      if (!group) {
        try {
          const comm = readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
          group = pid === this.workerPid ? 'worker' : clusterGroup(comm, readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' '));
        } catch { continue; }
      }
      if (!group) continue;
      // A shim reaps what exec ran in its pod (counted in the pods' cgroup): its own time only.
      const cpu = group === 'shims' ? ownCpu(pid) : processCpu(pid);
      if (cpu > 0 || !this.last.has(pid)) this.last.set(pid, { group, cpu: Math.max(cpu, this.last.get(pid)?.cpu ?? 0) });
    }
  }

  /** Cumulative CPU-seconds per group now (processes gone keep their last sample). */
  totals(): Record<string, number> {
    this.look();
    const out: Record<string, number> = {};
    for (const { group, cpu } of this.last.values()) out[group] = (out[group] ?? 0) + cpu;
    out.pods = podsCpu();
    const own = process.cpuUsage();
    out.bench = (own.user + own.system) / 1e6;
    const known = Object.values(out).reduce((s, x) => s + x, 0);
    out.rest = machineBusy() - known;
    return out;
  }

  /** CPU-seconds per group since this was made. */
  since(): Record<string, number> {
    const now = this.totals();
    return Object.fromEntries(Object.entries(now).map(([k, v]) => [k, v - (this.start[k] ?? 0)]));
  }
}

export function cpuLine(used: Record<string, number>, episodes: number): string {
  const total = Object.entries(used).filter(([k]) => k !== 'rest').reduce((s, [, x]) => s + x, 0);
  const order = ['worker', 'temporal', 'apiserver', 'etcd', 'kubelet', 'containerd', 'shims', 'pods', 'controllers', 'bench', 'rest'];
  return `CPU-s per episode ${(total / episodes).toFixed(3)} without the rest of the machine (runc, other sessions): ${order.filter((k) => k in used).map((k) => `${k} ${(used[k]! / episodes).toFixed(3)}`).join(', ')}`;
}
