// The Kubernetes part of `berth server status`: the cluster, its nodes and Berth's pods against max_pods.
import type { ClusterSandboxStatus } from '../worker.ts';
import { bold, dim, green, red, yellow } from './output.ts';

export function printCluster(s: ClusterSandboxStatus): void {
  const { cluster: c, slots } = s;
  console.log(`${bold('Cluster')}   ${c.server}  ${c.version}  namespace ${c.namespace}  sandbox queue ${s.queue}`);
  if (!c.nodes) console.log(`${bold('Nodes')}     ${yellow(`not listed (${c.nodesError ?? 'unknown'})`)}`);
  else {
    const ready = c.nodes.filter((n) => n.ready).length;
    const line = c.nodes.map((n) => `${n.name} ${n.ready ? green('ready') : red('not ready')} (${n.allocatable.cpu} cpu, ${n.allocatable.memory}, ${n.allocatable.pods} pods)`).join('; ');
    console.log(`${bold('Nodes')}     ${ready}/${c.nodes.length} ready: ${line}`);
  }
  const phases = Object.entries(c.pods.byPhase).map(([p, n]) => `${n} ${p}`).join(', ');
  console.log(`${bold('Pods')}      ${c.pods.total} of Berth's${phases ? ` (${phases})` : ''}`);
  const leaving = slots.leases.filter((l) => l.state === 'leaving').length;
  const used = `${slots.in_use}/${slots.capacity} in use`;
  console.log(`${bold('Slots')}     ${slots.in_use >= slots.capacity ? yellow(used) : used}${leaving ? ` (${leaving} being removed)` : ''}, bound by ${slots.bound}  ${dim(slots.where)}`);
}
