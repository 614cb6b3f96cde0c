import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const projectRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
/** The tree this code runs from: src/ in a checkout, dist/ in an installed package. */
const codeDir = join(dirname(fileURLToPath(import.meta.url)), '..');

function walk(dir: string, out: string[]): void {
  for (const e of readdirSync(dir).sort()) {
    const full = join(dir, e);
    if (statSync(full).isDirectory()) walk(full, out);
    else out.push(full);
  }
}

/** Identifies the code a detached worker runs, so a checkout that moved on replaces a stale worker. */
export function codeHash(): string {
  const files: string[] = [];
  walk(codeDir, files);
  // An installed package has no lock file; its package.json names its version.
  const lock = join(projectRoot, 'package-lock.json');
  files.push(existsSync(lock) ? lock : join(projectRoot, 'package.json'));
  const h = createHash('sha256');
  for (const f of files) h.update(f).update(readFileSync(f));
  return h.digest('hex').slice(0, 16);
}
