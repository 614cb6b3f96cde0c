// A store client from berth.toml as this machine reads it: its [results] settings and credentials.
import type { BerthConfig } from '../config/berth-config.ts';
import { storeCredentialsOf, storeLocationOf, storeSettingsOf, type StoreCredentials, type StoreSettings } from '../config/results-store.ts';
import { ResultsStore } from './s3.ts';

/** The store berth.toml names, or null when none is set. */
export function openStore(config: BerthConfig, env: NodeJS.ProcessEnv = process.env): ResultsStore | null {
  const settings = storeSettingsOf(config, env);
  return settings ? new ResultsStore(settings, storeCredentialsOf(config, env)) : null;
}

/**
 * A batch's store (`url`, s3://bucket/prefix: where) with this machine's endpoint, region and credentials (how), so no
 * credential travels with the batch. `here` is this machine's own [results] setting, or null.
 */
export function storeAt(url: string, config: BerthConfig, env: NodeJS.ProcessEnv = process.env): { settings: StoreSettings; here: StoreSettings | null; credentials: StoreCredentials | undefined } {
  const here = storeSettingsOf(config, env);
  return { settings: { ...(here ?? { region: 'us-east-1', pathStyle: false, keepLocal: true }), ...storeLocationOf(url) }, here, credentials: storeCredentialsOf(config, env) };
}
