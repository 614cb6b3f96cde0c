import { stopClusterIfTestsStartedIt, TEST_RUN_ENV } from './helpers/kubernetes.ts';
import { ensureTestServer } from './helpers/temporal-server.ts';

/** One shared dev server for the whole run (docs/design.md section 7, Tests); each file uses its own task queue. */
export default async function setup(): Promise<() => Promise<void>> {
  await ensureTestServer('dev');
  process.env[TEST_RUN_ENV] = String(process.pid);
  // The local Kubernetes cluster is shared by every file that asks for it and stopped once, here, if tests started it.
  return stopClusterIfTestsStartedIt;
}
