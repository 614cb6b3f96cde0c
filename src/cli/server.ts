import type { Command } from 'commander';
import { temporalAddress, uiUrl } from '../server/config.ts';
import { ensureServer, serverPid, stopServer } from '../server/devserver.ts';
import { temporalAnswers } from '../server/health.ts';
import { ensureWorker, stopWorker, workerPid, workerPolls } from '../server/worker-daemon.ts';
import { bold, green, printJson, red } from './output.ts';

async function status(json: boolean): Promise<void> {
  const { address, embedded } = temporalAddress();
  const up = await temporalAnswers(address);
  const polls = up ? await workerPolls(address).catch(() => false) : false;
  const info = { address, ui: uiUrl(), embedded, running: up, server_pid: serverPid() ?? null, worker_pid: workerPid() ?? null, worker_polling: polls };
  if (json) return printJson(info);
  console.log(`${bold('Temporal')}  ${up ? green('running') : red('not running')}  grpc ${address}  ${embedded ? '(embedded dev server)' : '(TEMPORAL_ADDRESS)'}`);
  console.log(`${bold('Web UI')}    ${uiUrl()}`);
  console.log(`${bold('Worker')}    ${polls ? green('polling queue "berth"') : red('no worker polls queue "berth"')}${workerPid() ? ` (pid ${workerPid()})` : ''}`);
  if (!up) console.log(`Start it with: npx berth server start`);
  if (!json && !up) process.exitCode = 1;
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
  server.command('status', { isDefault: true }).description('address, UI URL, and whether a worker polls').option('--json', 'print JSON')
    .action(async (o: { json?: boolean }) => status(Boolean(o.json)));
}
