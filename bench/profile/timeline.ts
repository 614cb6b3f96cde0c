// An episode's timeline from its Temporal history: when it ran, and each activity from scheduled to closed.
import type { Client } from '@temporalio/client';
import { phaseOf, type EpisodeTimeline, type Interval } from './attribution.ts';

type Ts = { seconds?: { toNumber(): number } | number | null; nanos?: number | null } | null | undefined;
const ms = (t: Ts): number => (t ? Number(typeof t.seconds === 'number' ? t.seconds : t.seconds?.toNumber() ?? 0) * 1000 + (t.nanos ?? 0) / 1e6 : 0);

/** An event's time, ms since the epoch (0 for none). */
export const eventTime = (e: { eventTime?: unknown } | null | undefined): number => ms(e?.eventTime as Ts);

/** `queued`: per phase, ms from an activity's scheduling to its start on a worker (summed over its activities). */
export interface EpisodeHistory { timeline: EpisodeTimeline; activities: Record<string, number>; events: number; queued: Record<string, number> }

/** The type of the local activity a marker records, if it is one. */
function localActivityType(e: { markerRecordedEventAttributes?: { markerName?: string | null; details?: Record<string, { payloads?: Array<{ data?: Uint8Array | null }> | null }> | null } | null }): string | undefined {
  const m = e.markerRecordedEventAttributes;
  const data = m?.markerName === 'core_local_activity' ? m.details?.data?.payloads?.[0]?.data : undefined;
  if (!data) return undefined;
  const marker = JSON.parse(Buffer.from(data).toString('utf8')) as { activity_type?: string; activityType?: string };
  return marker.activity_type ?? marker.activityType;
}

export async function episodeHistory(client: Client, workflowId: string, runId?: string): Promise<EpisodeHistory> {
  const events = (await client.workflow.getHandle(workflowId, runId).fetchHistory()).events ?? [];
  const scheduled = new Map<string, { type: string; at: number }>();
  const intervals: Interval[] = [];
  const activities: Record<string, number> = {};
  const queued: Record<string, number> = {};
  // A local activity (the plan since patch episode-v8) runs inside a workflow task: from its start to the marker.
  let taskStarted = 0;
  for (const e of events) {
    const at = ms(e.eventTime as Ts);
    if (e.workflowTaskStartedEventAttributes) taskStarted = at;
    const local = localActivityType(e);
    if (local) {
      activities[`${local} (local)`] = (activities[`${local} (local)`] ?? 0) + 1;
      intervals.push({ phase: phaseOf(local), start: taskStarted, end: at });
    }
    const s = e.activityTaskScheduledEventAttributes;
    if (s) {
      const type = s.activityType?.name ?? '?';
      scheduled.set(String(e.eventId), { type, at });
      activities[type] = (activities[type] ?? 0) + 1;
    }
    const started = e.activityTaskStartedEventAttributes;
    const of = started && scheduled.get(String(started.scheduledEventId));
    if (of) queued[phaseOf(of.type)] = (queued[phaseOf(of.type)] ?? 0) + (at - of.at);
    const closed = e.activityTaskCompletedEventAttributes ?? e.activityTaskFailedEventAttributes ?? e.activityTaskTimedOutEventAttributes ?? e.activityTaskCanceledEventAttributes;
    const from = closed && scheduled.get(String(closed.scheduledEventId));
    if (from) intervals.push({ phase: phaseOf(from.type), start: from.at, end: at });
  }
  const start = ms(events[0]?.eventTime as Ts);
  const end = ms(events[events.length - 1]?.eventTime as Ts);
  return { timeline: { start, end, activities: intervals }, activities, events: events.length, queued };
}
