// Issue 37, valid tasks refused, on the real engine: the same tiny tasks Harbor 0.25 ran (`harbor trials start -p
// TASK -a oracle`, 2026-12-05), each scored as Harbor scored it.
// - mapped: main as Harbor's Terminal-Bench mapper restates it (image ${MAIN_IMAGE_NAME}, build ${CONTEXT_DIR},
//   `sh -c "sleep infinity"`, TEST_DIR=${TEST_DIR}, cpus ${CPUS} and memory ${MEMORY}) beside a sidecar. Harbor: reward
//   1, the sidecar reachable, its container limited to the task's memory_mb; TEST_DIR was blank there (Harbor sets no
//   TEST_DIR), Berth gives /tests (docs/departures.md). The file here also binds ${HOST_VERIFIER_LOGS_PATH} onto
//   ${ENV_VERIFIER_LOGS_PATH}, as Harbor's older templates did: Harbor 0.25 sets those only when it bind-mounts the
//   log folders (`--ek auto_mounting=true`); without, its run failed on the blank mount (`invalid mount path: ':'`).
//   Berth keeps the folder in main and drops the bind.
// - offline: main's network_mode "none". Harbor: main had only `lo` and could not resolve its sidecar; reward 1. The
//   same beside task.toml policies that would switch main's networks by phase (the engine refuses to connect a
//   container on none: such an episode failed before main's phases were held at the baseline, offline-main.ts).
// - ordinary: environment/docker-compose.yml (COPY'd by the Dockerfile) and tests/docker-compose.yml are ordinary
//   files, memory = "1.9G" is 1945 MiB (Harbor's limit: 2039480320 bytes), artifact destination "" collected to
//   artifacts/app/out.txt. Harbor: reward 1.
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBatch } from '../../src/client/batch.ts';
import type { ResultRow } from '../../src/client/index.ts';
import { startTestWorkers, type TestCluster } from '../helpers/temporal.ts';
import { writeDataset } from '../helpers/tasks.ts';
import { BASE_IMAGE, cleanUpBatch } from './helpers.ts';

const LIMIT = 'cat /sys/fs/cgroup/memory/memory.limit_in_bytes 2>/dev/null || cat /sys/fs/cgroup/memory.max';
const SIZES = '[agent]\ntimeout_sec = 120\n[verifier]\ntimeout_sec = 60\n';

const mappedCompose = `services:
  main:
    build:
      context: \${CONTEXT_DIR}
    image: \${MAIN_IMAGE_NAME}
    command: ["sh", "-c", "sleep infinity"]
    environment:
      - TEST_DIR=\${TEST_DIR}
    volumes:
      - \${HOST_VERIFIER_LOGS_PATH}:\${ENV_VERIFIER_LOGS_PATH}
    deploy:
      resources:
        limits:
          cpus: \${CPUS}
          memory: \${MEMORY}
  helper:
    image: ${BASE_IMAGE}
    command: ["sleep", "infinity"]
`;

function mapped(id: string, environment: string, memory: string): Record<string, string> {
  return {
    [`${id}/task.toml`]: `[environment]\n${environment}${SIZES}`,
    [`${id}/instruction.md`]: 'Write the facts.\n',
    [`${id}/environment/Dockerfile`]: `FROM ${BASE_IMAGE}\nWORKDIR /app\n`,
    [`${id}/environment/docker-compose.yaml`]: mappedCompose,
    [`${id}/solution/solve.sh`]: `#!/bin/bash\n{ echo "TEST_DIR=$TEST_DIR"; ${LIMIT}; getent hosts helper >/dev/null && echo helper-ok; } > /app/facts\n`,
    [`${id}/tests/test.sh`]: '#!/bin/bash\ncp /app/facts /logs/verifier/facts.txt\n' +
      `[ "$(cat /app/facts)" = "$(printf 'TEST_DIR=/tests\\n${memory}\\nhelper-ok')" ] && echo 1 > /logs/verifier/reward.txt || echo 0 > /logs/verifier/reward.txt\n`,
  };
}

/** main on no network beside a sidecar: it sees only `lo` and cannot resolve the sidecar, whatever task.toml says. */
function offline(id: string, toml: string): Record<string, string> {
  return {
    [`${id}/task.toml`]: toml,
    [`${id}/instruction.md`]: 'Say what networks you have.\n',
    [`${id}/environment/Dockerfile`]: `FROM ${BASE_IMAGE}\nWORKDIR /app\n`,
    [`${id}/environment/docker-compose.yaml`]: `services:\n  main:\n    network_mode: "none"\n  helper:\n    image: ${BASE_IMAGE}\n    command: ["sleep", "infinity"]\n`,
    [`${id}/solution/solve.sh`]: '#!/bin/bash\n{ ls /sys/class/net; getent hosts helper || echo no-helper; } > /app/nets\n',
    [`${id}/tests/test.sh`]: '#!/bin/bash\ncp /app/nets /logs/verifier/nets.txt\n[ "$(cat /app/nets)" = "$(printf \'lo\\nno-helper\')" ] && echo 1 > /logs/verifier/reward.txt || echo 0 > /logs/verifier/reward.txt\n',
  };
}

describe('tasks Harbor 0.25 runs that Berth refused', () => {
  let cluster: TestCluster;
  let batchId: string | undefined;
  const rows = new Map<string, ResultRow>();
  const skipped: string[] = [];

  beforeAll(async () => {
    cluster = await startTestWorkers('harbor-main');
    const dataset = writeDataset({
      ...mapped('mapped', 'cpus = 1\nmemory_mb = 1024\n', '1073741824'),
      // Harbor 0.25 cannot run this one (Compose refuses the blank ${CPUS} it leaves): Berth's values size it as the host.
      ...mapped('mapped-unsized', '', String(Math.floor(totalmem() / 2 ** 20) * 2 ** 20)),
      ...offline('offline', SIZES),
      ...offline('offline-nonet', `[environment]\nnetwork_mode = "no-network"\n${SIZES}`),
      ...offline('offline-allow', '[agent]\nnetwork_mode = "allowlist"\nallowed_hosts = ["example.com"]\ntimeout_sec = 120\n[verifier]\ntimeout_sec = 60\n'),
      ...offline('offline-verpub', '[environment]\nnetwork_mode = "no-network"\n[agent]\ntimeout_sec = 120\n[verifier]\ntimeout_sec = 60\nnetwork_mode = "public"\n'),
      'ordinary/task.toml': `artifacts = [{ source = "/app/out.txt", destination = "" }]\n[environment]\nmemory = "1.9G"\n${SIZES}`,
      'ordinary/instruction.md': 'Do it.\n',
      'ordinary/environment/Dockerfile': `FROM ${BASE_IMAGE}\nWORKDIR /app\nCOPY docker-compose.yml /app/docker-compose.yml\n`,
      'ordinary/environment/docker-compose.yml': 'services:\n  web:\n    image: nginx\n    privileged: true\n',
      'ordinary/tests/docker-compose.yml': 'services:\n  db:\n    image: postgres\n',
      'ordinary/solution/solve.sh': '#!/bin/bash\necho done > /app/out.txt\n',
      'ordinary/tests/test.sh': `#!/bin/bash\nm=$(${LIMIT})\necho "$m" > /logs/verifier/mem.txt\n` +
        '[ -f /app/docker-compose.yml ] && [ -f /tests/docker-compose.yml ] && [ "$m" = 2039480320 ] && echo 1 > /logs/verifier/reward.txt || echo 0 > /logs/verifier/reward.txt\n',
    });
    const handle = await startBatch({
      dataset, resultsDir: mkdtempSync(join(tmpdir(), 'berth-harbor-main-')), taskQueue: cluster.taskQueue, client: cluster.client,
      concurrency: 3, logger: { warn: () => undefined },
    });
    batchId = handle.batchId;
    skipped.push(...handle.skipped.map((s) => `${s.task_id}: ${s.reason}`));
    for (const row of (await handle.wait()).rows) rows.set(row.task_id, row);
  }, 600_000);
  afterAll(async () => {
    if (batchId) await cleanUpBatch(cluster.client, batchId);
    await cluster?.stop();
  });

  const facts = (id: string, file: string): string => {
    const dir = rows.get(id)?.logs_dir;
    return dir && existsSync(join(dir, 'turn-1', 'verifier', file)) ? readFileSync(join(dir, 'turn-1', 'verifier', file), 'utf8') : '(none)';
  };

  it.each([
    ['mapped', 'facts.txt'],
    ['mapped-unsized', 'facts.txt'],
    ['offline', 'nets.txt'],
    ['offline-nonet', 'nets.txt'],
    ['offline-allow', 'nets.txt'],
    ['offline-verpub', 'nets.txt'],
    ['ordinary', 'mem.txt'],
  ])('%s loads and scores 1', (id, file) => {
    const row = rows.get(id);
    expect(row, `skipped: ${skipped.join('; ')}`).toBeDefined();
    expect(row, `${row!.failure_reason ?? ''}\n${facts(id, file)}`).toMatchObject({ reward: 1, mask_sample: false });
  });

  it('collects the artifact whose destination is "" where Harbor did: under its source path', () => {
    const dir = rows.get('ordinary')!.logs_dir!;
    expect(readFileSync(join(dir, 'turn-1', 'artifacts', 'app', 'out.txt'), 'utf8').trim()).toBe('done');
  });
});
