// The real public task folders the loader and integration tests read: ../shared/corpus beside this checkout (the
// project's layout), or BERTH_CORPUS. vitest.config.ts refuses to start without it (corpusProblem), with what to do.
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';

export const CORPUS = resolve(process.env.BERTH_CORPUS ?? join(import.meta.dirname, '..', '..', '..', 'shared', 'corpus'));

/** Why the tests cannot read the corpus, or null when they can. */
export function corpusProblem(dir = CORPUS): string | null {
  if (existsSync(join(dir, 'INVENTORY.md'))) return null;
  return `Berth's tests read the real task folders at ${dir} (shared/corpus beside this checkout, with its INVENTORY.md), ` +
    'and they are not there. Clone Berth beside the shared/ folder, or set BERTH_CORPUS to the corpus folder.';
}
