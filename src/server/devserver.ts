import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { findTemporalCli } from './binary.ts';
import { RETENTION_DAYS, serverSettings, temporalAddress, uiUrl } from '../config/temporal.ts';
import { SEARCH_ATTRIBUTE_TYPES } from '../config/search-attributes.ts';
import { alive } from '../config/process.ts';
import { readPid, spawnDetached, stopPid, tail } from './daemon.ts';
import { withLockFile } from '../config/lock-file.ts';
import { temporalAnswers, waitFor } from './health.ts';
import { homePath } from '../config/paths.ts';

const run = promisify(execFile);

export interface ServerInfo {
  address: string;
  uiUrl: string;
  embedded: boolean;
  started: boolean;
  pid?: number;
}

const pidFile = () => homePath('temporal.pid');
const logFile = () => homePath('logs', 'temporal.log');

/**
 * Starts (or reuses) the embedded dev server: SQLite under BERTH_HOME, UI on 8233, Berth's search
 * attributes, 30-day retention. With TEMPORAL_ADDRESS set it never starts anything.
 */
export async function ensureServer(): Promise<ServerInfo> {
  const { address, embedded } = temporalAddress();
  if (!embedded) {
    if (!(await temporalAnswers(address, 5000))) {
      throw new Error(`No Temporal server answers at TEMPORAL_ADDRESS=${address}. Start that cluster, or unset TEMPORAL_ADDRESS to use the embedded dev server.`);
    }
    return { address, uiUrl: uiUrl(), embedded, started: false };
  }
  if (await temporalAnswers(address)) return { address, uiUrl: uiUrl(), embedded, started: false, pid: readPid(pidFile()) };
  return withLockFile(homePath('temporal.start.lock'), async () => {
    if (await temporalAnswers(address)) return { address, uiUrl: uiUrl(), embedded, started: false, pid: readPid(pidFile()) };
    const cli = findTemporalCli();
    const s = serverSettings();
    const args = [
      'server', 'start-dev',
      '--db-filename', homePath('temporal.db'),
      '--ip', s.host,
      '--port', String(s.port),
      '--ui-port', String(s.uiPort),
      '--namespace', s.namespace,
      '--log-level', 'warn',
      '--ui-disable-news-fetch',
      // A write-ahead log without an fsync per commit: a killed server loses nothing (the OS still holds the
      // log); only a machine crash can lose the last moments. The default journal fsyncs every history write.
      '--sqlite-pragma', 'journal_mode=wal',
      '--sqlite-pragma', 'synchronous=normal',
      ...Object.entries(SEARCH_ATTRIBUTE_TYPES).flatMap(([name, type]) => ['--search-attribute', `${name}=${type}`]),
    ];
    const pid = spawnDetached(cli.path, args, { log: logFile(), pidFile: pidFile() });
    const up = await waitFor(async () => alive(pid) && (await temporalAnswers(address)), 60_000, 300);
    if (!up) {
      throw new Error(`The Temporal dev server (${cli.path}) did not answer at ${address} within 60 s.\nLast lines of ${logFile()}:\n${tail(logFile())}`);
    }
    await setRetention(cli.path, address, s.namespace);
    return { address, uiUrl: uiUrl(), embedded, started: true, pid };
  });
}

async function setRetention(cli: string, address: string, namespace: string): Promise<void> {
  await run(cli, ['operator', 'namespace', 'update', '--address', address, '--namespace', namespace,
    '--retention', `${RETENTION_DAYS * 24}h`], { timeout: 30_000 });
}

export async function stopServer(): Promise<boolean> {
  return stopPid(pidFile(), 15_000);
}

export function serverPid(): number | undefined {
  const pid = readPid(pidFile());
  return alive(pid) ? pid : undefined;
}
