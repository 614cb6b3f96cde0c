import { homedir } from 'node:os';
import { join } from 'node:path';
import { mkdirSync } from 'node:fs';

/** BERTH_HOME holds the dev server's SQLite file, daemon logs, pid files and image records. */
export function berthHome(): string {
  const home = process.env.BERTH_HOME ?? join(homedir(), '.berth');
  mkdirSync(join(home, 'logs'), { recursive: true });
  return home;
}

export const homePath = (...parts: string[]): string => join(berthHome(), ...parts);
