import { cpus } from 'node:os';
import { Slots } from './slots.ts';

let slots: Slots | undefined;

export function workerSlots(): Slots {
  if (!slots) slots = new Slots(Number(process.env.BERTH_WORKER_SLOTS ?? cpus().length * 4));
  return slots;
}
