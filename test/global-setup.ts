import { ensureServer } from '../src/server/devserver.ts';

/** One shared dev server for the whole run (DESIGN.md section 7, Tests); each file uses its own task queue. */
export default async function setup(): Promise<void> {
  if (process.env.BERTH_TEST_NO_SERVER) return;
  await ensureServer();
}
