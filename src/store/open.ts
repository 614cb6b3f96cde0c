// A store client from berth.toml as this machine reads it: its [results] settings and credentials.
import type { BerthConfig } from '../config/berth-config.ts';
import { storeCredentialsOf, storeSettingsOf } from '../config/results-store.ts';
import { ResultsStore } from './s3.ts';

/** The store berth.toml names, or null when none is set. */
export function openStore(config: BerthConfig, env: NodeJS.ProcessEnv = process.env): ResultsStore | null {
  const settings = storeSettingsOf(config, env);
  return settings ? new ResultsStore(settings, storeCredentialsOf(config, env)) : null;
}
