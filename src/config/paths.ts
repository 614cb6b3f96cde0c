import { homedir } from 'node:os';
import { join } from 'node:path';
import { mkdirSync } from 'node:fs';

/** BERTH_HOME (default ~/.berth), resolved here and nowhere else: it holds berth's state on this host. */
export function berthHomeDir(): string {
  return process.env.BERTH_HOME ?? join(homedir(), '.berth');
}

/** BERTH_HOME, made ready: the dev server's SQLite file, daemon logs, pid files and image records live there. */
export function berthHome(): string {
  const home = berthHomeDir();
  mkdirSync(join(home, 'logs'), { recursive: true });
  return home;
}

export const homePath = (...parts: string[]): string => join(berthHome(), ...parts);
