import { defaultPayloadConverter as converter } from '@temporalio/common';
import type { temporal } from '@temporalio/proto';
import { describe, expect, it } from 'vitest';
import { seededRefIn } from '../../src/client/episodes.ts';
import type { SandboxRef } from '../../src/workflows/types.ts';

// Where an episode's sandbox was, read from its history (hostQueueOf: which worker keeps its files; the warm-pool
// tests: whether its seed claimed): a seeding activity's result, or the sandbox a failure after its seed names.
const ref = (name: string, more: Partial<SandboxRef> = {}): SandboxRef => ({ queue: 'q', name, id: name, host: 'h', user: 'root', workdir: '/', logsDir: `/l/${name}`, ...more });
type Event = temporal.api.history.v1.IHistoryEvent;
/** Event ids are protobuf Longs; the reader only compares them as strings. */
const id = (n: number) => n as unknown as NonNullable<Event['eventId']>;
const scheduled = (n: number, type: string): Event => ({ eventId: id(n), activityTaskScheduledEventAttributes: { activityType: { name: type } } });
const completed = (of: number, result: unknown): Event => ({ activityTaskCompletedEventAttributes: { scheduledEventId: id(of), result: { payloads: [converter.toPayload(result)] } } });
const failed = (of: number, details: unknown[]): Event => ({
  activityTaskFailedEventAttributes: { scheduledEventId: id(of), failure: { applicationFailureInfo: { details: { payloads: details.map((d) => converter.toPayload(d)) } } } },
});

describe('seededRefIn', () => {
  it.each([
    ['a seed activity\'s result', [scheduled(5, 'seed'), completed(5, ref('a'))], 'a'],
    ['seedThenAgentTurn\'s result', [scheduled(5, 'seedThenAgentTurn'), completed(5, { sandbox: ref('b'), agent: {}, seedSec: 1 })], 'b'],
    ['seedAgentVerifyTurn\'s result', [scheduled(5, 'seedAgentVerifyTurn'), completed(5, { sandbox: ref('c'), seedSec: 1, verified: {} })], 'c'],
    ['seedAgentVerifyTurn failed after its seed: the sandbox its failure names',
      [scheduled(5, 'seedAgentVerifyTurn'), failed(5, [{ other: 1 }, { seededSandbox: ref('d', { claimed: true }) }])], 'd'],
    ['its seed itself failed: none', [scheduled(5, 'seedAgentVerifyTurn'), failed(5, [])], undefined],
    ['an attempt that failed, then the retried one\'s result: the last', [scheduled(5, 'seed'), completed(5, ref('e1')), scheduled(9, 'seedThenAgentTurn'), failed(9, [{ seededSandbox: ref('e2') }])], 'e2'],
    ['another activity\'s result is no seed', [scheduled(5, 'verifyTurn'), completed(5, ref('x'))], undefined],
  ])('%s', (_what, events, name) => {
    expect(seededRefIn(events, converter)?.name).toBe(name);
  });

  it('keeps what the seed said: claimed, the files queue', () => {
    const events = [scheduled(5, 'seedAgentVerifyTurn'), failed(5, [{ seededSandbox: ref('f', { claimed: true, filesQueue: 'w1-files' }) }])];
    expect(seededRefIn(events, converter)).toMatchObject({ claimed: true, filesQueue: 'w1-files' });
  });
});
