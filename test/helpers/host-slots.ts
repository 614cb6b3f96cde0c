import Docker from 'dockerode';
import { readSlots, slotsFile } from '../../src/config/slots.ts';
import { hostQueueName } from '../../src/config/index.ts';

/** The sandbox queue a worker with this suffix polls on the engine at `docker` (the default engine if none). */
export async function testHostQueue(suffix: string, docker = new Docker()): Promise<string> {
  return `${hostQueueName(String((await docker.info()).ID))}-${suffix}`;
}

/** The slots in use on a host queue now, as every worker process on the host sees them. */
export const slotsInUse = (queue: string): number => readSlots(slotsFile(queue)).leases.length;
