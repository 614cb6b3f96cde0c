// Issue 37: "one of them refuses every Compose task Harbor's own Terminal-Bench converter writes". A Terminal-Bench
// task with a sidecar, converted by Harbor 0.25 itself (`harbor task migrate`, its TerminalBenchMapper, which restates
// Harbor's `main` over the task's client service), loads and scores 1 as Harbor scored it (`harbor trials start -a
// oracle` on the same conversion: reward 1). Converted without --cpus/--memory-mb it loads too (Harbor could not start
// it: Compose refuses the blank ${CPUS} it leaves).
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBatch } from '../../src/client/batch.ts';
import { loadTask } from '../../src/task/index.ts';
import { migrateWithHarbor } from '../helpers/harbor.ts';
import { startTestWorkers, type TestCluster } from '../helpers/temporal.ts';
import { writeDataset } from '../helpers/tasks.ts';
import { BASE_IMAGE, cleanUpBatch } from './helpers.ts';

/** A Terminal-Bench task: its client service and a server sidecar, with the harness's own variables. */
const terminalBench = (): string => writeDataset({
  'ping/task.yaml': 'instruction: Note where the server is.\nmax_agent_timeout_sec: 120\nmax_test_timeout_sec: 60\n',
  'ping/docker-compose.yaml': [
    'services:',
    '  client:',
    '    build:',
    '      dockerfile: Dockerfile',
    '    image: ${T_BENCH_TASK_DOCKER_CLIENT_IMAGE_NAME}',
    '    container_name: ${T_BENCH_TASK_DOCKER_CLIENT_CONTAINER_NAME}',
    '    command: ["sh", "-c", "sleep infinity"]',
    '    environment:',
    '      - TEST_DIR=${T_BENCH_TEST_DIR}',
    '    volumes:',
    '      - ${T_BENCH_TASK_LOGS_PATH}:${T_BENCH_CONTAINER_LOGS_PATH}',
    '    working_dir: /app',
    '  server:',
    `    image: ${BASE_IMAGE}`,
    '    command: ["sleep", "infinity"]',
    '',
  ].join('\n'),
  'ping/Dockerfile': `FROM ${BASE_IMAGE}\nWORKDIR /app\n`,
  'ping/solution.sh': '#!/bin/bash\ngetent hosts server > /app/seen\n',
  'ping/run-tests.sh': '#!/bin/bash\ntest -s /app/seen\n',
});

describe('a Compose task converted by Harbor\'s own Terminal-Bench mapper', () => {
  let cluster: TestCluster;
  let batchId: string | undefined;
  const sized = mkdtempSync(join(tmpdir(), 'berth-tb-sized-'));
  const unsized = mkdtempSync(join(tmpdir(), 'berth-tb-unsized-'));

  beforeAll(async () => {
    const source = terminalBench();
    await migrateWithHarbor(source, sized, ['--cpus', '1', '--memory-mb', '1024']);
    await migrateWithHarbor(source, unsized);
    cluster = await startTestWorkers('harbor-migrate');
  }, 120_000);
  afterAll(async () => {
    if (batchId) await cleanUpBatch(cluster.client, batchId);
    await cluster?.stop();
  });

  it('loads as a group of main and its sidecar, sized or not', async () => {
    for (const dir of [sized, unsized]) {
      const task = await loadTask(join(dir, 'ping'));
      expect(task.compose?.services).toEqual(['main', 'server']);
    }
  });

  it('scores 1 with the oracle, as under Harbor', async () => {
    const handle = await startBatch({ dataset: sized, resultsDir: mkdtempSync(join(tmpdir(), 'berth-tb-results-')), taskQueue: cluster.taskQueue, client: cluster.client });
    batchId = handle.batchId;
    expect(handle.skipped).toEqual([]);
    const [row] = (await handle.wait()).rows;
    expect(row, row!.failure_reason ?? '').toMatchObject({ reward: 1, mask_sample: false });
  }, 240_000);
});
