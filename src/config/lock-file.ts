// One lock-file helper for the files under BERTH_HOME that several Berth processes change (the slots file, the
// dev server's and the detached worker's start).
import { closeSync, openSync, rmSync, statSync } from 'node:fs';

/**
 * Only one process at a time runs fn: the others wait on the lock file, looking every pollMs (a lock older
 * than staleMs is broken: its holder died).
 */
export async function withLockFile<T>(lock: string, fn: () => T | Promise<T>, { staleMs = 120_000, pollMs = 200 } = {}): Promise<T> {
  const deadline = Date.now() + staleMs;
  for (;;) {
    try {
      closeSync(openSync(lock, 'wx'));
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw err;
      const stale = (() => { try { return Date.now() - statSync(lock).mtimeMs > staleMs; } catch { return false; } })();
      if (stale) rmSync(lock, { force: true });
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${lock}; remove it if no berth process holds it`);
      await new Promise((r) => setTimeout(r, pollMs * (0.5 + Math.random())));
    }
  }
  try {
    return await fn();
  } finally {
    rmSync(lock, { force: true });
  }
}
