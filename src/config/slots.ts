// A host's sandbox slots file (docs/design.md section 7, Slots): where it is, its format, and how many slots a host has.
// The worker changes it (src/host/slots.ts); `berth server status` reads it.
import { readFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { loadBerthConfig } from './berth-config.ts';
import { workerSlotsSetting } from './env.ts';
import { homePath } from './paths.ts';

/** Sandbox slots per host: BERTH_WORKER_SLOTS, else berth.toml's [worker].slots, else cores × 4 (docs/configuration.md). */
export function slotCapacity(): { slots: number; from: string } {
  const env = workerSlotsSetting();
  if (env !== undefined && env !== '') {
    const n = Number(env);
    if (!Number.isInteger(n) || n < 1) throw new Error(`BERTH_WORKER_SLOTS=${env} is not a whole number of at least 1; set it to the sandboxes this host runs at once, e.g. 16, or unset it`);
    return { slots: n, from: 'BERTH_WORKER_SLOTS' };
  }
  const { config, file } = loadBerthConfig();
  if (config.worker.slots !== undefined) return { slots: config.worker.slots, from: `${file} [worker].slots` };
  return { slots: cpus().length * 4, from: `default: ${cpus().length} cores × 4` };
}

/** Where a host queue's slots live: every worker process with this BERTH_HOME on the host shares the file. */
export const slotsFile = (queue: string): string => homePath('slots', `${queue}.json`);

/**
 * One sandbox slot taken on a host. Held by a running episode (key: its workflow id), or leaving: its episode
 * was torn down and its sandboxes are being removed (key: `<workflow id>/<run id>`).
 */
export interface Lease {
  key: string;
  workflowId: string;
  runId: string;
  /** When it was reserved (ms since the epoch). */
  at: number;
  /** The worker process that reserved it (`<hostname>:<pid>`), for status and logs. */
  by: string;
  /** When the episode's seed started on this host. */
  seeded?: number;
  /** When it was torn down; the slot is freed once its sandboxes `names` are gone. */
  leaving?: number;
  names?: string[];
  /**
   * A warm pool's sandbox holds this slot (key `pool/<name>`): seeded ahead by worker process `owner` for the task
   * `task` (its digest) with seed key `key` (docs/performance-notes.md, The warm pool); `for`: the episode (workflow
   * id) it was seeded for while its batch was starting, which alone claims it (absent: any episode of the key, and in
   * files written before it existed).
   */
  pool?: { name: string; key: string; task: string; owner: string; for?: string };
  /**
   * A pooled sandbox this episode's reservation took over (the host was full), or that its seed is claiming: its
   * seed claims or removes it, and its teardown removes it if no seed did.
   */
  pooled?: string;
}

export interface SlotsView {
  /** The capacity the last worker process that changed the file was configured with. */
  capacity?: number;
  leases: Lease[];
}

/** A host's slots file as it is now; no file is no slot in use. */
export function readSlots(file: string): SlotsView {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as SlotsView;
  } catch {
    return { leases: [] };
  }
}
