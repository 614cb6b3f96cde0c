// The task queues a deployment polls: the shared one every worker serves, and one per Docker engine (a host).

import { taskQueueOverride } from './env.ts';

export const SHARED_QUEUE = 'berth';

/** The shared queue this process works on: BERTH_TASK_QUEUE when set (a cluster of its own), else SHARED_QUEUE. */
export const sharedQueue = (): string => taskQueueOverride() ?? SHARED_QUEUE;

export const hostQueueName = (engineId: string): string =>
  `berth-host-${engineId.replace(/[^A-Za-z0-9_-]/g, '').toLowerCase()}`;

/**
 * The shared queue of the workers of one sandbox: `shared` itself for Docker, `<shared>-<sandbox>` for another, so a
 * batch started for a sandbox (`berth run --sandbox`) is planned and run only by workers of that sandbox.
 */
export const sandboxSharedQueue = (shared: string, sandbox: string): string => (sandbox === 'docker' ? shared : `${shared}-${sandbox}`);

/**
 * The queue of one BERTH_HOME's episode files on a sandbox queue that workers on several machines share (a cluster):
 * every worker with that BERTH_HOME polls it, so whoever asks for a folder reaches the disk that holds it.
 */
export const filesQueueName = (sandboxQueue: string, homeId: string): string => `${sandboxQueue}-files-${homeId}`;
