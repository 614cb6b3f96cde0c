// `berth gc BATCH`: the batch's objects in the results store (docs/deployment.md, A results store), listed, then removed.
import { loadBerthConfig } from '../config/berth-config.ts';
import { batchPrefix, openStore, type ResultsStore } from '../store/index.ts';

export interface StoredBatch { store: string; prefix: string; objects: number; bytes: number; remove(): Promise<number>; close(): void }

/** What the store berth.toml names holds of the batch; null when no store is set. */
export async function storedBatch(batchId: string): Promise<StoredBatch | null> {
  const store: ResultsStore | null = openStore(loadBerthConfig().config);
  if (!store) return null;
  const prefix = batchPrefix(store.settings, batchId);
  const objects = await store.list(prefix).catch((err: unknown) => { store.destroy(); throw err; });
  return {
    store: store.settings.url, prefix, objects: objects.length, bytes: objects.reduce((n, o) => n + o.size, 0),
    remove: () => store.remove(objects.map((o) => o.key)),
    close: () => store.destroy(),
  };
}
