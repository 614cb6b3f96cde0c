import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { homePath } from '../config/paths.ts';

/**
 * This BERTH_HOME's id, made once and kept in it: workers that share the folder (one machine, or a shared volume)
 * share the id, so they serve one another's episode files; another machine's workers have another.
 */
export function homeId(): string {
  const file = homePath('home-id');
  const read = (): string | null => {
    try {
      const id = readFileSync(file, 'utf8').trim();
      return /^[0-9a-f]{12}$/.test(id) ? id : null;
    } catch {
      return null;
    }
  };
  const made = randomBytes(6).toString('hex');
  // `wx`: two workers starting at once agree on the first one written; a damaged file is replaced.
  try {
    writeFileSync(file, `${made}\n`, { flag: 'wx' });
  } catch {
    const kept = read();
    if (kept) return kept;
    writeFileSync(file, `${made}\n`);
  }
  return made;
}
