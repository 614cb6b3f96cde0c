import { cpus } from 'node:os';
import { homePath } from '../config/paths.ts';
import { loadBerthConfig } from '../config/berth-config.ts';
import { RemovalJournal } from './removal-journal.ts';
import { Remover } from './remover.ts';
import { sandboxDriver, sandboxProvider } from './runtime.ts';
import { GROUP_PREFIX } from './seed-compose.ts';
import { HostSlots } from './slots.ts';

/** Sandbox slots per host: BERTH_WORKER_SLOTS, else berth.toml's [worker].slots, else cores × 4 (docs/configuration.md). */
export function slotCapacity(): { slots: number; from: string } {
  const env = process.env.BERTH_WORKER_SLOTS;
  if (env !== undefined && env !== '') {
    const n = Number(env);
    if (!Number.isInteger(n) || n < 1) throw new Error(`BERTH_WORKER_SLOTS=${env} is not a whole number of at least 1; set it to the sandboxes this host runs at once, e.g. 16, or unset it`);
    return { slots: n, from: 'BERTH_WORKER_SLOTS' };
  }
  const { config, file } = loadBerthConfig();
  if (config.worker.slots !== undefined) return { slots: config.worker.slots, from: `${file} [worker].slots` };
  return { slots: cpus().length * 4, from: `default: ${cpus().length} cores × 4` };
}

const slotsByQueue = new Map<string, HostSlots>();

/** Where a host queue's slots live: every worker process with this BERTH_HOME on the host shares the file. */
export const slotsFile = (queue: string): string => homePath('slots', `${queue}.json`);
const removers = new Map<string, Remover>();

/** The slots of a host's queue, shared with every worker process polling it (under BERTH_HOME/slots). */
export function hostSlots(queue: string): HostSlots {
  let s = slotsByQueue.get(queue);
  if (!s) {
    s = new HostSlots(slotsFile(queue), slotCapacity().slots);
    slotsByQueue.set(queue, s);
  }
  return s;
}

/** The background remover of a host's queue; its journal is the queue's own, so a worker on another engine never resumes it. */
export function hostRemover(queue: string): Remover {
  let r = removers.get(queue);
  if (!r) {
    r = new Remover({
      remove: (name) => (name.startsWith(GROUP_PREFIX) ? sandboxDriver().remove({ name: name.slice(GROUP_PREFIX.length), kind: 'group' }) : sandboxProvider().teardown(name)),
      journal: new RemovalJournal(homePath('removals', queue)),
    });
    removers.set(queue, r);
  }
  return r;
}

/** Every remover of this process (a worker drains them when it stops). */
export function allRemovers(): Remover[] {
  return [...removers.values()];
}
