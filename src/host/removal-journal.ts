import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface JournalEntry {
  key: string;
  names: string[];
}

/**
 * Sandboxes handed to the remover and not yet removed: one small file per key, so the next start
 * of a worker that died with removals pending removes them. No fsync: this guards against a dead
 * process, not a dead machine (the janitor is for that).
 */
export class RemovalJournal {
  constructor(private readonly dir: string) {}

  add(key: string, names: readonly string[]): void {
    mkdirSync(this.dir, { recursive: true });
    // Written aside and renamed, so another process reading the folder never sees half an entry.
    const tmp = `${this.file(key)}.${process.pid}.tmp`;
    writeFileSync(tmp, JSON.stringify({ key, names }));
    renameSync(tmp, this.file(key));
  }

  /** Never throws: a stale entry only costs a removal that finds nothing at the next start. */
  remove(key: string): void {
    try {
      rmSync(this.file(key), { force: true });
    } catch {
      // see above
    }
  }

  entries(): JournalEntry[] {
    let files: string[];
    try {
      files = readdirSync(this.dir).filter((f) => f.endsWith('.json'));
    } catch {
      return [];
    }
    return files.flatMap((f) => {
      try {
        return [JSON.parse(readFileSync(join(this.dir, f), 'utf8')) as JournalEntry];
      } catch {
        return []; // removed meanwhile by its worker
      }
    });
  }

  private file(key: string): string {
    return join(this.dir, `${createHash('sha256').update(key).digest('hex').slice(0, 24)}.json`);
  }
}
