// The task queues a deployment polls: the shared one every worker serves, and one per Docker engine (a host).

import { taskQueueOverride } from './env.ts';

export const SHARED_QUEUE = 'berth';

/** The shared queue this process works on: BERTH_TASK_QUEUE when set (a cluster of its own), else SHARED_QUEUE. */
export const sharedQueue = (): string => taskQueueOverride() ?? SHARED_QUEUE;

export const hostQueueName = (engineId: string): string =>
  `berth-host-${engineId.replace(/[^A-Za-z0-9_-]/g, '').toLowerCase()}`;
