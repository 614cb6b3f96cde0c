// `[environment].env` values read from the worker's environment are secrets like any resolved `${VAR}` (docs/design.md section 7
// "Secrets": resolved values never appear in workflow inputs, results, failure reasons, logs or transcripts Berth
// writes). The command agent echoes $TOKEN into its output and test.sh prints it and fails: the row, every file
// under the results folder and the failure reason hold [REDACTED], never the value.
import { mkdtempSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { startBatch } from '../../src/client/batch.ts';
import { startTestWorkers, type TestCluster } from '../helpers/temporal.ts';
import { writeDataset } from '../helpers/tasks.ts';

const VARIABLE = `BERTH_E2E_HOST_TOKEN_${randomBytes(3).toString('hex').toUpperCase()}`;
const TOKEN = `tok-${randomBytes(8).toString('hex')}`;

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? filesUnder(p) : [p];
  });
}

describe('[environment].env values resolved from the worker are redacted', () => {
  let cluster: TestCluster;
  beforeAll(async () => {
    process.env[VARIABLE] = TOKEN; // the in-process worker's environment, where `${VAR}` is resolved
    cluster = await startTestWorkers('env-redaction');
  });
  afterAll(async () => {
    await cluster?.stop();
    delete process.env[VARIABLE];
  });

  it('the agent\'s output, test.sh\'s output, the row and the failure reason never hold the value', async () => {
    const dataset = writeDataset({
      'leak/task.toml': `[environment]\ndocker_image = "berth-base:bookworm"\nworkdir = "/app"\nenv = { TOKEN = "\${${VARIABLE}}" }\n[agent]\ntimeout_sec = 60\n[verifier]\ntimeout_sec = 60\n`,
      'leak/instruction.md': 'Say the token.\n',
      'leak/tests/test.sh': '#!/bin/bash\necho "the verifier saw $TOKEN"\necho "the verifier saw $TOKEN" >&2\nexit 3\n',
    });
    const resultsDir = mkdtempSync(join(tmpdir(), 'berth-env-redaction-'));
    const handle = await startBatch({
      dataset, agent: 'command', agentArgs: { cmd: 'echo "the agent saw $TOKEN"; echo "the agent saw $TOKEN" >&2; echo "$TOKEN" > /app/out.txt' },
      resultsDir, taskQueue: cluster.taskQueue, client: cluster.client,
    });
    const row = (await handle.wait()).rows[0]!;
    // test.sh wrote no reward: scored 0, and its reason quotes its output.
    expect(row).toMatchObject({ reward: 0, mask_sample: false, failure_kind: 'harbor:missing_reward' });
    expect(row.failure_reason).toContain('[REDACTED]');
    expect(JSON.stringify(row)).not.toContain(TOKEN);
    // The rows the client wrote, and the episode's logs (agent, verifier) on this host.
    const files = [...filesUnder(resultsDir), ...filesUnder(row.logs_dir!)];
    const agentOut = files.filter((f) => f.includes(join('turn-1', 'agent')));
    expect(agentOut.length).toBeGreaterThan(0);
    expect(agentOut.map((f) => readFileSync(f, 'utf8')).join('\n')).toContain('the agent saw [REDACTED]');
    expect(readFileSync(files.find((f) => f.endsWith('test-stdout.txt'))!, 'utf8')).toContain('the verifier saw [REDACTED]');
    for (const f of files) expect(readFileSync(f, 'utf8'), f).not.toContain(TOKEN);
  });

  it('a later step\'s setup.sh that prints it and fails: its output and the row\'s failure reason hold [REDACTED]', async () => {
    const dataset = writeDataset({
      's/task.toml': `[environment]\ndocker_image = "berth-base:bookworm"\nworkdir = "/app"\nenv = { TOKEN = "\${${VARIABLE}}" }\n[[steps]]\nname = "first"\n[[steps]]\nname = "second"\n`,
      ...Object.fromEntries(['first', 'second'].flatMap((n) => [
        [`s/steps/${n}/instruction.md`, `${n}\n`],
        [`s/steps/${n}/tests/test.sh`, '#!/bin/bash\necho 1 > /logs/verifier/reward.txt\n'],
      ])),
      's/steps/second/workdir/setup.sh': '#!/bin/bash\necho "setup saw $TOKEN"\nexit 3\n',
    });
    const handle = await startBatch({ dataset, agent: 'nop', resultsDir: mkdtempSync(join(tmpdir(), 'berth-env-redaction-')), taskQueue: cluster.taskQueue, client: cluster.client });
    const row = (await handle.wait()).rows[0]!;
    expect(row, row.failure_reason ?? '').toMatchObject({ failure_kind: 'harbor:step_setup_failed', mask_sample: false });
    expect(row.failure_reason).toContain('setup saw [REDACTED]');
    expect(JSON.stringify(row)).not.toContain(TOKEN);
    expect(readFileSync(join(row.logs_dir!, 'steps', 'second', 'setup-output.txt'), 'utf8')).toBe('setup saw [REDACTED]\n');
  });
});
