// What the warm-pool tests ask: whether an episode's seed claimed a pooled sandbox (its SandboxRef in the seed's
// result, read from the episode's history), and which pooled sandboxes a host queue holds on the engine.
import type { Client } from '@temporalio/client';
import Docker from 'dockerode';
import { LABEL_POOL } from '../../src/sandbox/names.ts';
import type { ResultRow, SandboxRef } from '../../src/workflows/types.ts';

/** The activities that seed an episode's sandbox: `seed`, and a single-step episode's `seedThenAgentTurn`. */
export const SEEDING_ACTIVITIES = ['seed', 'seedThenAgentTurn'];

/** The SandboxRef the episode's (last) seed returned, or undefined when no seed completed. */
export async function seedResult(client: Client, workflowId: string): Promise<SandboxRef | undefined> {
  const events = (await client.workflow.getHandle(workflowId).fetchHistory()).events ?? [];
  const seeds = new Set(events.filter((e) => SEEDING_ACTIVITIES.includes(e.activityTaskScheduledEventAttributes?.activityType?.name ?? '')).map((e) => String(e.eventId)));
  const done = events.filter((e) => seeds.has(String(e.activityTaskCompletedEventAttributes?.scheduledEventId))).pop();
  const data = done?.activityTaskCompletedEventAttributes?.result?.payloads?.[0]?.data;
  if (!data) return undefined;
  const result = JSON.parse(Buffer.from(data).toString('utf8')) as SandboxRef | { sandbox: SandboxRef };
  return 'sandbox' in result ? result.sandbox : result;
}

/** Whether the episode's seed claimed a pooled sandbox. */
export const claimedSeed = async (client: Client, workflowId: string): Promise<boolean> => (await seedResult(client, workflowId))?.claimed === true;

/** The containers of the host queue's warm pool on the local engine, claimed ones too (by their pool label). */
export async function pooledOn(hostQueue: string, docker = new Docker()): Promise<Array<{ name: string; labels: Record<string, string> }>> {
  const list = await docker.listContainers({ all: true, filters: { label: [`${LABEL_POOL}=${hostQueue}`] } });
  return list.map((c) => ({ name: (c.Names[0] ?? c.Id).replace(/^\//, ''), labels: c.Labels }));
}

/** Polls until `check` holds, or throws with what it last saw. */
export async function eventually<T>(what: string, get: () => Promise<T>, check: (v: T) => boolean, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: T = await get();
  while (!check(last)) {
    if (Date.now() > deadline) throw new Error(`${what}: still ${JSON.stringify(last)} after ${timeoutMs / 1000} s`);
    await new Promise((r) => setTimeout(r, 250));
    last = await get();
  }
  return last;
}

/** Per task, the row the checks read: through the pool, an episode that claimed (the second repeat when none did). */
async function claimedRowOf(client: Client, rows: readonly ResultRow[]): Promise<Record<string, ResultRow>> {
  const best: Record<string, { row: ResultRow; claimed: boolean }> = {};
  for (const row of rows) {
    const claimed = await claimedSeed(client, row.workflow_id);
    const held = best[row.task_id];
    if (!held || (claimed && !held.claimed) || (claimed === held.claimed && row.repeat === 2)) best[row.task_id] = { row, claimed };
  }
  return Object.fromEntries(Object.entries(best).map(([id, b]) => [id, b.row]));
}

/**
 * The two ways the seed tests run (test/e2e/seed-image.test.ts, seed-order.test.ts): every episode seeded fresh (the
 * batch turns the pool off), and through the warm pool: two repeats one at a time, so each task's episodes can claim
 * what the pool seeded while the one before ran; the checks read a claimed episode of each task.
 */
export const SEED_MODES = [
  {
    through: 'seeded fresh', pool: false,
    batch: (concurrency: number) => ({ concurrency, warmPool: false }),
    checkedRows: async (_client: Client, rows: readonly ResultRow[]) => Object.fromEntries(rows.map((r) => [r.task_id, r])),
    claimed: claimedSeed,
  },
  {
    through: 'through the warm pool', pool: true,
    batch: (_concurrency: number) => ({ concurrency: 1, repeats: 2 }),
    checkedRows: claimedRowOf,
    claimed: claimedSeed,
  },
] as const;
