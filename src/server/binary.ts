import { temporalCliOverride } from '../config/env.ts';
import { existsSync, readFileSync, accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';
import { homePath } from '../config/paths.ts';

export interface TemporalCli {
  path: string;
  source: 'TEMPORAL_CLI' | 'PATH' | 'setup';
}

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** Same order as scripts/setup.sh: TEMPORAL_CLI, PATH, then what the setup installed. */
export function findTemporalCli(): TemporalCli {
  const fromEnv = temporalCliOverride();
  if (fromEnv) {
    if (!executable(fromEnv)) throw new Error(`TEMPORAL_CLI=${fromEnv} is not an executable file; fix the path or unset it`);
    return { path: fromEnv, source: 'TEMPORAL_CLI' };
  }
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    const candidate = join(dir, 'temporal');
    if (dir && executable(candidate)) return { path: candidate, source: 'PATH' };
  }
  const recorded = homePath('temporal-cli-path');
  if (existsSync(recorded)) {
    const path = readFileSync(recorded, 'utf8').trim();
    if (executable(path)) return { path, source: 'setup' };
  }
  throw new Error('No Temporal CLI found (TEMPORAL_CLI, PATH, or the setup\'s install). Run: npm run setup');
}
