import type { Command } from 'commander';
import { temporalAddress, uiUrl } from '../config/temporal.ts';
import { ensureServer, serverPid, stopServer } from '../server/devserver.ts';
import { temporalAnswers } from '../server/health.ts';
import { ensureWorker, stopWorker, workerPid, workerPolls } from '../server/worker-daemon.ts';
import { hostStatus, type HostStatus } from '../server/host-status.ts';
import { hostQueueSuffix } from '../config/env.ts';
import { clusterSandboxStatus, hostIdentity } from '../worker.ts';
import type { SandboxProviderName } from '../config/berth-config.ts';
import { printCluster } from './cluster-status.ts';
import { sandboxOption } from './sandbox-option.ts';
import { bold, dim, green, printJson, red, yellow } from './output.ts';

async function status(json: boolean, sandbox?: SandboxProviderName): Promise<void> {
  const { address, embedded } = temporalAddress();
  const up = await temporalAnswers(address);
  const polls = up ? await workerPolls(address).catch(() => false) : false;
  // BERTH_HOST_QUEUE_SUFFIX names a test worker's queue, as for `berth worker`.
  const host = await hostIdentity({ suffix: hostQueueSuffix() })
    .then((identity) => hostStatus(identity, up ? address : undefined))
    .catch((err: Error) => ({ error: err.message }));
  const cluster = await clusterSandboxStatus({ ...(sandbox ? { sandbox } : {}), ...(hostQueueSuffix() ? { suffix: hostQueueSuffix() } : {}) })
    .catch((err: Error) => ({ error: err.message }));
  const info = { address, ui: uiUrl(), embedded, running: up, server_pid: serverPid() ?? null, worker_pid: workerPid() ?? null, worker_polling: polls, host, ...(cluster ? { cluster } : {}) };
  if (json) return printJson(info);
  console.log(`${bold('Temporal')}  ${up ? green('running') : red('not running')}  grpc ${address}  ${embedded ? '(embedded dev server)' : '(TEMPORAL_ADDRESS)'}`);
  console.log(`${bold('Web UI')}    ${uiUrl()}`);
  console.log(`${bold('Worker')}    ${polls ? green('polling queue "berth"') : red('no worker polls queue "berth"')}${workerPid() ? ` (pid ${workerPid()})` : ''}`);
  if ('error' in host) console.log(`${bold('Host')}      ${red(`no Docker engine answers (${host.error})`)}`);
  else printHost(host);
  if (cluster && 'error' in cluster) console.log(`${bold('Cluster')}   ${red(`the Kubernetes sandbox does not answer (${cluster.error})`)}`);
  else if (cluster) printCluster(cluster);
  if (!up) console.log(`Start it with: npx berth server start`);
  if (!json && !up) process.exitCode = 1;
}

function printHost(h: HostStatus): void {
  console.log(`${bold('Host')}      ${h.host}  sandbox queue ${h.queue}`);
  const seen = (p: HostStatus['workers'][number]) => `${p.identity} (polled ${Math.max(0, Math.round((Date.now() - Date.parse(p.last_poll)) / 1000))} s ago)`;
  console.log(`${bold('Workers')}   ${h.workers.length === 0 ? yellow('none polls this host\'s queue') : `${h.workers.length} on this host: ${h.workers.map(seen).join(', ')}`}`);
  const leaving = h.slots.leases.filter((l) => l.state === 'leaving').length;
  const full = h.slots.in_use >= h.slots.capacity;
  const used = `${h.slots.in_use}/${h.slots.capacity} in use`;
  console.log(`${bold('Slots')}     ${full ? yellow(used) : used}${leaving ? ` (${leaving} being removed)` : ''}  ${dim(h.slots.file)}`);
}

export function registerServer(program: Command): void {
  const server = program.command('server').description('the embedded Temporal dev server and its worker');
  server.command('start').description('start (or reuse) the dev server and a detached worker').option('--json', 'print JSON')
    .action(async (o: { json?: boolean }) => {
      const s = await ensureServer();
      if (s.embedded) await ensureWorker(s.address);
      await status(Boolean(o.json));
    });
  server.command('stop').description('stop the dev server and worker that berth started').option('--json', 'print JSON')
    .action(async (o: { json?: boolean }) => {
      const worker = await stopWorker();
      const srv = await stopServer();
      if (o.json) printJson({ worker_stopped: worker, server_stopped: srv });
      else console.log(`worker ${worker ? 'stopped' : 'was not running'}; server ${srv ? 'stopped' : 'was not running'}`);
    });
  server.command('status', { isDefault: true }).description('address, UI URL, whether a worker polls, the workers on this host and its sandbox slots in use; with a Kubernetes sandbox, the cluster, its nodes and Berth\'s pods').option('--json', 'print JSON')
    .addOption(sandboxOption('also show the cluster of this sandbox (default: berth.toml [sandbox] provider)'))
    .action(async (o: { json?: boolean; sandbox?: SandboxProviderName }) => status(Boolean(o.json), o.sandbox));
}
