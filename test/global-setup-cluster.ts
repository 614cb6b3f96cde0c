import { ensureTestServer } from './helpers/temporal-server.ts';

/**
 * The `cluster` project's server: the Temporal cluster of scripts/setup-temporal-cluster.sh, built once per machine,
 * started (or reused) and given Berth's namespace, retention and search attributes. Left running, as the dev server is.
 */
export default async function setup(): Promise<void> {
  await ensureTestServer('cluster');
}
