// The results store as this host reaches it: the batch says where (bucket and prefix, from its s3:// URL), this host's
// berth.toml and environment say how (endpoint, region, credentials), so no credential travels in Temporal's history.
import { createHash } from 'node:crypto';
import { loadBerthConfig } from '../config/berth-config.ts';
import type { StoreCredentials, StoreSettings } from '../config/results-store.ts';
import { ResultsStore, storeAt } from '../store/index.ts';

export interface HostStore {
  store: ResultsStore;
  /** This host's own [results] settings (null when its berth.toml names no store). */
  here: StoreSettings | null;
  credentials: StoreCredentials | undefined;
}

/** One client per store and credentials in this worker: its connections are kept between episodes. */
const clients = new Map<string, ResultsStore>();

/** The batch's store (`url`, s3://bucket/prefix) with this host's endpoint, region and credentials. */
export function hostStore(url: string): HostStore {
  const { settings, here, credentials } = storeAt(url, loadBerthConfig().config);
  const key = createHash('sha256').update(JSON.stringify([settings, credentials ?? null])).digest('hex');
  let store = clients.get(key);
  if (!store) clients.set(key, store = new ResultsStore(settings, credentials));
  return { store, here, credentials };
}
