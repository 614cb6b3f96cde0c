// One batch on the real engine and Temporal: the image's HEALTHCHECK awaited at seed before the agent starts, a
// never-healthy image retried then failing the seed with the check's output (Task Folder Format § Environment:
// healthcheck; Task Folder Verifiers § Image entrypoint), the entrypoint's output kept with the turn's verifier
// logs, CPU hints in the shared verifier, and a GPU task refused at prepare (docs/design.md section 7, Formats). Run twice:
// every episode seeded fresh (no warm pool), and through the warm pool (docs/performance-notes.md, The warm pool: two repeats
// one at a time, the second of each task checked, claiming a sandbox seeded ahead), which must give the same.
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBatch } from '../../src/client/batch.ts';
import type { ResultRow } from '../../src/workflows/types.ts';
import { startTestWorkers, type TestCluster } from '../helpers/temporal.ts';
import { writeDataset } from '../helpers/tasks.ts';
import { SEED_MODES, SEEDING_ACTIVITIES } from '../helpers/warm-pool.ts';

const TOML = '[environment]\nworkdir = "/app"\n[agent]\ntimeout_sec = 60\n[verifier]\ntimeout_sec = 60\n';
const REWARD_IF_OK = '#!/bin/bash\n[ "$(cat /app/out.txt 2>/dev/null)" = ok ] && echo 1 > /logs/verifier/reward.txt || echo 0 > /logs/verifier/reward.txt\n';

function task(id: string, o: { toml?: string; dockerfile?: string; entry?: string; solve: string; test?: string }): Record<string, string> {
  return {
    [`${id}/task.toml`]: o.toml ?? TOML,
    [`${id}/instruction.md`]: 'do it\n',
    [`${id}/solution/solve.sh`]: `#!/bin/bash\n${o.solve}\n`,
    [`${id}/tests/test.sh`]: o.test ?? REWARD_IF_OK,
    ...(o.dockerfile ? { [`${id}/environment/Dockerfile`]: o.dockerfile } : {}),
    ...(o.entry ? { [`${id}/environment/entry.sh`]: `#!/bin/bash\n${o.entry}\n` } : {}),
  };
}

const withEntry = (extra: string) => `FROM berth-base:bookworm\nCOPY --chmod=755 entry.sh /entry.sh\nENTRYPOINT ["/entry.sh"]\n${extra}`;

describe.each(SEED_MODES)('seed with the image configuration on record, $through', (mode) => {
  let cluster: TestCluster;
  let rows: Record<string, ResultRow>;
  let skipped: Array<{ task_id: string; stage: string; reason: string }>;

  beforeAll(async () => {
    cluster = await startTestWorkers('seed-image');
    const dataset = writeDataset({
      // Healthy on its third probe, not on a clock: only the check makes /tmp/ready (Docker's own runner is off in the
      // sandbox), so the agent (solve.sh) finds it only when the seed ran the check until it passed before starting it.
      ...task('health-late', {
        dockerfile: withEntry('HEALTHCHECK --interval=1s --timeout=2s --retries=20 CMD n=$(($(cat /tmp/n 2>/dev/null || echo 0) + 1)); echo $n > /tmp/n; [ $n -ge 3 ] && touch /tmp/ready\n'),
        entry: 'exec "$@"',
        solve: 'test -f /tmp/ready && [ "$(cat /tmp/n)" -ge 3 ] && echo ok > out.txt',
      }),
      ...task('health-never', {
        dockerfile: 'FROM berth-base:bookworm\nHEALTHCHECK --interval=1s --timeout=2s --retries=2 CMD echo not-ready-yet; exit 1\n',
        solve: 'echo ok > out.txt',
      }),
      ...task('entry-steady', { dockerfile: withEntry(''), entry: 'echo steady-up\nexec "$@"', solve: 'echo ok > out.txt' }),
      // It dies once the agent has started (not on a clock: a loaded machine's seed can outlast any fixed delay).
      ...task('entry-dies', {
        dockerfile: withEntry(''), entry: 'echo going-down; while [ ! -e /tmp/agent-started ]; do sleep 0.2; done; exit 3',
        solve: 'touch /tmp/agent-started; sleep 3; echo ok > out.txt',
      }),
      ...task('entry-broken', { dockerfile: withEntry(''), entry: 'echo cannot-start >&2; exit 5', solve: 'echo ok > out.txt' }),
      ...task('cpu-hints', {
        toml: `[environment]\ndocker_image = "berth-base:bookworm"\nworkdir = "/app"\ncpus = 1\n[agent]\ntimeout_sec = 60\n[verifier]\ntimeout_sec = 60\n[verifier.env]\nOMP_NUM_THREADS = "3"\n`,
        solve: 'echo "$OPENBLAS_NUM_THREADS $OMP_NUM_THREADS" > agent-env.txt; echo ok > out.txt',
        test: '#!/bin/bash\ncp /app/agent-env.txt /logs/verifier/agent-env.txt\necho "$OPENBLAS_NUM_THREADS $OMP_NUM_THREADS" > /logs/verifier/verifier-env.txt\necho 1 > /logs/verifier/reward.txt\n',
      }),
      ...task('wants-gpu', {
        toml: `[environment]\ndocker_image = "berth-base:bookworm"\ngpus = 1\n[agent]\ntimeout_sec = 60\n[verifier]\ntimeout_sec = 60\n`,
        solve: 'echo ok > out.txt',
      }),
    });
    // Through the pool, three repeats: health-late's pooled seeds (3 s of probes) are under way when its first repeat
    // starts (a first seed of a key is not waited for), and its second claimed nothing in 2 of 4 CI runs on
    // 2026-12-06, cause not found (the worker logs "seeds fresh" with the pool's state; see the closing note).
    const handle = await startBatch({
      dataset, ...mode.batch(6), ...(mode.pool ? { repeats: 3 } : {}), resultsDir: mkdtempSync(join(tmpdir(), 'berth-seed-image-')), taskQueue: cluster.taskQueue, client: cluster.client,
    });
    skipped = handle.skipped;
    rows = await mode.checkedRows(cluster.client, (await handle.wait()).rows);
  }, 600_000);

  it(mode.pool ? 'each checked episode whose seed succeeds claimed a sandbox seeded ahead' : 'no episode claimed a pooled sandbox', async () => {
    for (const id of ['health-late', 'entry-steady', 'entry-dies', 'cpu-hints']) {
      expect(await mode.claimed(cluster.client, rows[id]!.workflow_id), id).toBe(mode.pool);
    }
  });
  afterAll(async () => { await cluster?.stop(); });

  it('awaits the image HEALTHCHECK before the agent starts', () => {
    expect(rows['health-late']).toMatchObject({ reward: 1, mask_sample: false });
  });

  it("a never-healthy image is seeded again while attempts last, then fails the seed with the check's output", async () => {
    const row = rows['health-never']!;
    expect(row).toMatchObject({ mask_sample: true, failure_kind: 'harbor:seed_failed' });
    expect(row.failure_reason).toContain('not-ready-yet');
    expect(row.failure_reason).toMatch(/failed 2 times in a row/);
    const history = await cluster.client.workflow.getHandle(row.workflow_id).fetchHistory();
    const events = history.events ?? [];
    const seedScheduled = events.find((e) => SEEDING_ACTIVITIES.includes(e.activityTaskScheduledEventAttributes?.activityType?.name ?? ''))!;
    const seedStarted = events.find((e) => String(e.activityTaskStartedEventAttributes?.scheduledEventId) === String(seedScheduled.eventId));
    expect(seedStarted!.activityTaskStartedEventAttributes!.attempt).toBe(3);
  });

  it("keeps the entrypoint's output as entrypoint-stdout.txt with the turn's verifier logs", () => {
    const row = rows['entry-steady']!;
    expect(row).toMatchObject({ reward: 1, mask_sample: false });
    expect(readFileSync(join(row.logs_dir!, 'turn-1', 'verifier', 'entrypoint-stdout.txt'), 'utf8')).toBe('steady-up\n');
  });

  it('an entrypoint that dies masks the row with harbor:entrypoint_failed, pointing at the kept output', () => {
    const row = rows['entry-dies']!;
    expect(row).toMatchObject({ mask_sample: true, failure_kind: 'harbor:entrypoint_failed' });
    const kept = join(row.logs_dir!, 'turn-1', 'verifier', 'entrypoint-stdout.txt');
    expect(row.failure_reason).toContain(kept);
    expect(existsSync(kept) && readFileSync(kept, 'utf8')).toBe('going-down\n');
  });

  it('an entrypoint that fails at seed: the reason points at the output kept with the first turn\'s verifier logs', () => {
    const row = rows['entry-broken']!;
    expect(row).toMatchObject({ mask_sample: true, failure_kind: 'harbor:entrypoint_failed' });
    // A failed seed has no sandbox, so no logs_dir on the row: the reason is where the user finds the output.
    const kept = /kept in (\S+)/.exec(row.failure_reason ?? '')?.[1] ?? '';
    expect(kept).toMatch(/\/turn-1\/verifier\/entrypoint-stdout\.txt$/);
    expect(readFileSync(kept, 'utf8')).toBe('cannot-start\n');
  });

  it('CPU hints reach the agent and the shared verifier; [verifier].env wins', () => {
    const row = rows['cpu-hints']!;
    expect(row).toMatchObject({ reward: 1 });
    expect(readFileSync(join(row.logs_dir!, 'turn-1', 'verifier', 'agent-env.txt'), 'utf8')).toBe('1 1\n');
    expect(readFileSync(join(row.logs_dir!, 'turn-1', 'verifier', 'verifier-env.txt'), 'utf8')).toBe('1 3\n');
  });

  it('a GPU task on an engine without GPUs is refused at prepare, listed in skipped.json with the reason', () => {
    expect(rows['wants-gpu']).toBeUndefined();
    expect(skipped).toEqual([expect.objectContaining({ task_id: 'wants-gpu', stage: 'prepare', reason: expect.stringContaining('[environment].gpus = 1') })]);
  });
});
