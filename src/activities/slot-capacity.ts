import { workerSlotsSetting } from '../config/env.ts';
import { cpus } from 'node:os';
import { homePath } from '../config/paths.ts';
import { loadBerthConfig } from '../config/berth-config.ts';

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
