// The names of a rollout run's queries and updates, and its add-work payload (the workflow, `berth serve`, the clients).
import type { RunTask } from './types.ts';

export interface AddWork {
  tasks: RunTask[];
  n?: number;
}

export const RUN_QUERIES = { status: 'status', groups: 'groups' } as const;
export const RUN_UPDATES = {
  ack: 'ack', addWork: 'addWork', setPolicy: 'setPolicy', drain: 'drain', resume: 'resume', cancel: 'cancel', close: 'close',
} as const;
