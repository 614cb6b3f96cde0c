import { mkdir, open, readFile, rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * A lock file created with O_EXCL holding the owner's pid. A file left by a dead process
 * (same host) is taken over. Returns the release function.
 */
export async function acquireFileLock(path: string, pollMs = 250): Promise<() => Promise<void>> {
  await mkdir(dirname(path), { recursive: true });
  for (;;) {
    try {
      const fh = await open(path, 'wx');
      await fh.writeFile(String(process.pid));
      await fh.close();
      return async () => {
        await rm(path, { force: true });
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const owner = Number((await readFile(path, 'utf8').catch(() => '')).trim());
    if (Number.isInteger(owner) && owner > 0 && !processAlive(owner)) {
      await rm(path, { force: true });
      continue;
    }
    await sleep(pollMs);
  }
}
