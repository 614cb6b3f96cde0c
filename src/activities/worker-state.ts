import { cpus } from 'node:os';
import { homePath } from '../server/paths.ts';
import { RemovalJournal } from './removal-journal.ts';
import { Remover } from './remover.ts';
import { sandboxProvider } from './runtime.ts';
import { Slots } from './slots.ts';

let slots: Slots | undefined;
let remover: Remover | undefined;

export function workerSlots(): Slots {
  if (!slots) slots = new Slots(Number(process.env.BERTH_WORKER_SLOTS ?? cpus().length * 4));
  return slots;
}

export function workerRemover(): Remover {
  if (!remover) {
    remover = new Remover({
      remove: (name) => sandboxProvider().teardown(name),
      journal: new RemovalJournal(homePath('removals')),
    });
  }
  return remover;
}
