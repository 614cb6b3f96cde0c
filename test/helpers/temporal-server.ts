// Which Temporal the engine tests run against, chosen in one place as the sandbox is: the dev server (default), or
// the Temporal cluster of scripts/setup-temporal-cluster.sh (the `cluster` project of vitest.config.ts sets
// BERTH_TEST_TEMPORAL=cluster and TEMPORAL_ADDRESS to CLUSTER.address). The cluster runs beside the dev server.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ensureServer } from '../../src/server/devserver.ts';
import { serverSettings } from '../../src/config/temporal.ts';
import { prepareCluster } from '../../src/server/search-attributes.ts';
import { repoRoot } from './cli.ts';

const run = promisify(execFile);

export type TestServerKind = 'dev' | 'cluster';

import { CLUSTER } from './temporal-server-env.ts';

export { CLUSTER };

/** The cluster's daemons a test may kill (postgres: an immediate stop, as a crash). */
export type ClusterDaemon = 'postgres' | 'history' | 'matching' | 'frontend' | 'worker' | 'ui';

export function testServerKind(): TestServerKind {
  return process.env.BERTH_TEST_TEMPORAL === 'cluster' ? 'cluster' : 'dev';
}

/** Runs scripts/setup-temporal-cluster.sh with `args`; answers its output, or throws with it. */
export async function clusterScript(...args: string[]): Promise<string> {
  try {
    const { stdout } = await run('bash', [join(repoRoot, 'scripts', 'setup-temporal-cluster.sh'), ...args], { timeout: 60 * 60_000, maxBuffer: 8 * 1024 * 1024 });
    return stdout;
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string; message: string };
    throw new Error(`scripts/setup-temporal-cluster.sh ${args.join(' ')} failed: ${e.message}\n${e.stdout ?? ''}${e.stderr ?? ''}`);
  }
}

/** kill -9 of one of the cluster's daemons (postgres: `pg_ctl stop -m immediate`). */
export async function killClusterDaemon(name: ClusterDaemon): Promise<void> {
  await clusterScript('--kill', name);
}

/** Starts whichever of the cluster's daemons are not running (builds nothing once built) and waits until it answers. */
export async function startCluster(): Promise<void> {
  await clusterScript();
}

/** Global setup: the server of `kind` running and ready for Berth (the cluster also gets Berth's namespace and attributes). */
export async function ensureTestServer(kind: TestServerKind): Promise<void> {
  if (kind === 'dev') {
    if (!process.env.BERTH_TEST_NO_SERVER) await ensureServer();
    return;
  }
  await startCluster();
  await prepareCluster(CLUSTER.address, serverSettings().namespace);
}
