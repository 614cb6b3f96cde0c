import { defaultPayloadConverter } from '@temporalio/common';
import type { Client } from '@temporalio/client';

/** Episodes of a batch waiting for a sandbox slot on one host, and that host's slots as its worker last saw them. */
export interface SlotWait {
  host: string;
  inUse: number;
  capacity: number;
  episodes: number;
}

/** The activities that wait for a slot (src/activities/pick-host.ts). */
const PICKING = new Set(['planAndPickHost', 'pickHost']);
/** Running episodes looked at: waiting ones are among the few most recently started. */
const LOOK_AT = 16;

/**
 * Which hosts this batch's episodes wait on for a sandbox slot, from the heartbeat details of their pending
 * pickHost activity (`{ waiting: { host, inUse, capacity } }`), newest running episodes first.
 */
export async function slotWaits(client: Client, batchId: string): Promise<SlotWait[]> {
  const running: string[] = [];
  const query = `BerthBatch = "${batchId}" AND WorkflowType = "episodeWorkflow" AND ExecutionStatus = "Running"`;
  for await (const wf of client.workflow.list({ query, pageSize: LOOK_AT })) {
    running.push(wf.workflowId);
    if (running.length >= LOOK_AT) break;
  }
  const byHost = new Map<string, SlotWait>();
  await Promise.all(running.map(async (id) => {
    const d = await client.workflow.getHandle(id).describe().catch(() => undefined);
    for (const a of d?.raw.pendingActivities ?? []) {
      const payload = a.heartbeatDetails?.payloads?.[0];
      if (!PICKING.has(a.activityType?.name ?? '') || !payload) continue;
      const w = (defaultPayloadConverter.fromPayload(payload) as { waiting?: { host?: string; inUse?: number; capacity?: number } } | undefined)?.waiting;
      if (!w || typeof w !== 'object' || !w.host) continue;
      const seen = byHost.get(w.host);
      if (seen) seen.episodes++;
      else byHost.set(w.host, { host: w.host, inUse: w.inUse ?? 0, capacity: w.capacity ?? 0, episodes: 1 });
    }
  }));
  return [...byHost.values()].sort((a, b) => a.host.localeCompare(b.host));
}

/** `waiting for a sandbox slot on <host>: 8/8 in use`, one clause per host, or '' when nothing waits. */
export function slotWaitText(waits: SlotWait[]): string {
  return waits.map((w) => `waiting for a sandbox slot on ${w.host}: ${w.inUse}/${w.capacity} in use`).join(' · ');
}
