import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startBatch } from '../../src/client/batch.ts';
import type { ResultRow } from '../../src/workflows/types.ts';
import { startTestWorkers, type TestCluster } from '../helpers/temporal.ts';
import { CORPUS } from '../helpers/corpus.ts';

const corpus = CORPUS;
// No registry: the corpus's base images map to the local Debian base (docs/design.md section 4).
const aliases = {
  'ubuntu:24.04': 'berth-base:bookworm', 'ubuntu:22.04': 'berth-base:bookworm',
  'python:3.13-slim': 'berth-base:bookworm', 'python:3.12-slim': 'berth-base:bookworm',
};

// The offline-runnable corpus tasks (INVENTORY.md "offline": yes, or build-only with Debian's mirror reachable)
// through whole episodes with the oracle: each must score 1.
const solvable = [
  'hello-user', 'hello-workdir', 'hello-multi-step-simple', 'hello-healthcheck', 'separate-verifier-environment',
  'separate-implicit', 'separate-reuse-env',
];

describe('the offline corpus through Berth with the oracle (issues 4, 5, 7)', () => {
  let cluster: TestCluster;
  let rows: Map<string, ResultRow>;
  let nopRows: Map<string, ResultRow>;
  let skipped: string[];
  beforeAll(async () => {
    cluster = await startTestWorkers('corpus');
    rows = new Map();
    nopRows = new Map();
    skipped = [];
    for (const [agent, into] of [['oracle', rows], ['nop', nopRows]] as const) {
      for (const dataset of ['harbor-examples', 'harbor-verifier-mode-matrix']) {
        const handle = await startBatch({
          dataset: join(corpus, dataset), agent, imageAliases: aliases, concurrency: 3,
          resultsDir: mkdtempSync(join(tmpdir(), 'berth-corpus-')), taskQueue: cluster.taskQueue, client: cluster.client,
          taskFilter: (id) => solvable.includes(id) || (agent === 'oracle' && (id === 'environment-env-single' || id === 'hello-world')),
          logger: { warn: () => undefined },
        });
        skipped.push(...handle.skipped.map((s) => s.task_id));
        for (const row of (await handle.wait()).rows) into.set(row.task_id, row);
      }
    }
  }, 900_000);
  afterAll(async () => { await cluster?.stop(); });

  it.each(solvable)('%s scores 1 with the oracle', (id) => {
    expect(rows.get(id), `skipped: ${skipped.join(', ')}`).toMatchObject({ reward: 1, mask_sample: false, failure_kind: null });
  });

  it.each(solvable)('%s scores 0 with nop (the floor)', (id) => {
    expect(nopRows.get(id), `skipped: ${skipped.join(', ')}`).toMatchObject({ reward: 0, mask_sample: false });
  });

  it('environment-env-single has no solution: the oracle does nothing, and its env reached the entrypoint', () => {
    // The task's test checks the marker its ENTRYPOINT writes from [environment].env; with no solve.sh the score is the test's verdict.
    expect(rows.get('environment-env-single')).toMatchObject({ mask_sample: false, reward: 1 });
  });

  it('hello-world needs the internet at test time (uvx): it runs and scores 0, counted, not masked', () => {
    expect(rows.get('hello-world')).toMatchObject({ mask_sample: false, reward: 0 });
  });

  it('separate verification is recorded on the row', () => {
    expect(rows.get('separate-implicit')!.verifier_mode).toBe('separate');
    expect(rows.get('hello-user')!.verifier_mode).toBe('shared');
  });
});
