// The task queues a deployment polls: the shared one every worker serves, and one per Docker engine (a host).

export const SHARED_QUEUE = 'berth';

export const hostQueueName = (engineId: string): string =>
  `berth-host-${engineId.replace(/[^A-Za-z0-9_-]/g, '').toLowerCase()}`;
