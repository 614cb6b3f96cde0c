// The corpus's offline-buildable Compose tasks through whole episodes (issue 13, Tests): with image aliases
// (no registry) each earns its oracle's reward; sidecar-artifacts's nop earns 0. INVENTORY.md #12, #16.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import Docker from 'dockerode';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startBatch } from '../../src/client/batch.ts';
import type { ResultRow } from '../../src/workflows/types.ts';
import { startTestWorkers, type TestCluster } from '../helpers/temporal.ts';
import { CORPUS } from '../task/helpers.ts';
import { groupLeftovers } from './helpers.ts';

const aliases = {
  'ubuntu:24.04': 'berth-base:bookworm', 'ubuntu:22.04': 'berth-base:bookworm',
  'python:3.12-slim': 'berth-base:bookworm', 'alpine:3.21': 'berth-base:bookworm',
};
const offline = ['environment-env-multi', 'sidecar-artifacts'];

describe('offline Compose tasks of the corpus', () => {
  let cluster: TestCluster;
  const rows = new Map<string, ResultRow>();
  const nopRows = new Map<string, ResultRow>();
  // Docker keeps only its last 256 events: they are read live while the batches run.
  type Event = { Action: string; timeNano: number; Actor: { Attributes: Record<string, string> } };
  const events: Event[] = [];
  beforeAll(async () => {
    const stream = await new Docker().getEvents({ filters: { type: ['container'], event: ['die', 'create'] } });
    let partial = '';
    stream.on('data', (d: Buffer) => {
      const lines = (partial + d.toString()).split('\n');
      partial = lines.pop()!;
      for (const l of lines) if (l.trim()) events.push(JSON.parse(l) as Event);
    });
    cluster = await startTestWorkers('compose-corpus');
    for (const [agent, into] of [['oracle', rows], ['nop', nopRows]] as const) {
      const handle = await startBatch({
        dataset: join(CORPUS, 'harbor-examples'), agent, imageAliases: aliases, concurrency: 2,
        resultsDir: mkdtempSync(join(tmpdir(), 'berth-compose-corpus-')), taskQueue: cluster.taskQueue, client: cluster.client,
        taskFilter: (id) => offline.includes(id) && (agent === 'oracle' || id === 'sidecar-artifacts'),
        logger: { warn: () => undefined },
      });
      for (const row of (await handle.wait()).rows) into.set(row.task_id, row);
    }
    (stream as unknown as { destroy(): void }).destroy();
  }, 900_000);
  afterAll(async () => { await cluster?.stop(); });

  it('environment-env-multi: [environment].env reaches main\'s entrypoint, never the sidecar; a named volume; $$', () => {
    const row = rows.get('environment-env-multi');
    expect(row, row?.failure_reason ?? '').toMatchObject({ reward: 1, mask_sample: false, failure_kind: null });
  });

  it('sidecar-artifacts: a collect hook in the sidecar and its artifacts reach a separate verifier', () => {
    const row = rows.get('sidecar-artifacts');
    expect(row, row?.failure_reason ?? '').toMatchObject({ reward: 1, mask_sample: false, failure_kind: null, verifier_mode: 'separate' });
    expect(nopRows.get('sidecar-artifacts')).toMatchObject({ reward: 0, mask_sample: false });
  });

  // nemo_gym.data.tasks.harbor.verifier_env § Compose tasks / Harbor 2.5: with separate verification the agent's whole
  // group stops (main and every sidecar, after their hooks and artifacts) before the verifier's sandbox exists.
  it('sidecar-artifacts: main and the sidecar stop before the separate verifier\'s sandbox is created', async () => {
    const row = rows.get('sidecar-artifacts')!;
    const at = (action: string, match: (a: Record<string, string>) => boolean) => events
      .filter((e) => e.Action === action && e.Actor.Attributes['berth.workflow'] === row.workflow_id && match(e.Actor.Attributes))
      .map((e) => e.timeNano);
    const verifierCreated = at('create', (a) => a['berth.role'] === 'verifier');
    expect(verifierCreated, JSON.stringify(events.map((e) => [e.Action, e.Actor.Attributes['berth.role'], e.Actor.Attributes['com.docker.compose.service'], e.Actor.Attributes.name]))).toHaveLength(1);
    for (const service of ['main', 'api']) {
      const died = at('die', (a) => a['com.docker.compose.service'] === service);
      expect(died.length, `${service} stopped`).toBeGreaterThan(0);
      expect(Math.min(...died), `${service} stopped before the verifier was created`).toBeLessThan(verifierCreated[0]!);
    }
  });

  it('leaves no container, network or volume behind', async () => {
    for (const row of [...rows.values(), ...nopRows.values()]) await groupLeftovers(`berth.workflow=${row.workflow_id}`);
  });
});
