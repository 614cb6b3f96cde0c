// A worker killed with -9 while a sandbox is in an allowlist agent phase (docs/design.md section 7, Network): the
// restarted worker serves the egress proxy again where the sandbox was told, and every later phase gets its own
// network, because each switch is driven by the phase about to run, not by what the dead worker remembered.
import { afterAll, describe, expect, it } from 'vitest';
import { Client, Connection } from '@temporalio/client';
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startBatch } from '../../src/client/batch.ts';
import { writeDataset } from '../helpers/tasks.ts';
import { noContainersLeft, waitForFileInEpisode } from '../helpers/docker.ts';
import { PROBE, PROBING_SIDECAR_COMPOSE, SIDE, startTestServers, type TestServers } from '../helpers/network.ts';
import { startWorkerProcess, type WorkerProcess } from '../helpers/worker-process.ts';

describe('kill -9 of the worker between network phases (issue 14)', () => {
  const suffix = `netcrash-${randomBytes(3).toString('hex')}`;
  const env = { BERTH_TASK_QUEUE: `test-${suffix}`, BERTH_HOST_QUEUE_SUFFIX: suffix, BERTH_HEARTBEAT_TIMEOUT_SEC: '6' };
  const workers: WorkerProcess[] = [];
  let connection: Connection;
  let servers: TestServers | undefined;
  afterAll(async () => {
    for (const w of workers) await w.stop();
    await connection?.close();
    await servers?.remove();
  });

  it('the restarted episode\'s next phases have the right network', async () => {
    servers = await startTestServers(`t14-crash-${randomBytes(3).toString('hex')}`);
    const { a, b, aIp, bIp } = servers;
    const test = (body: string) => `#!/bin/bash\n${PROBE}\nok=1\nfail() { echo "FAILED: $*"; ok=0; }\nis() { [ "$(cat $1)" = "$2" ] || fail "$1: $(cat $1), wanted $2"; }\nnow() { [ "$(probe $1 $2)" = "$3" ] || fail "$1 $2 now: wanted $3"; }\n${body}\necho $ok > /logs/verifier/reward.txt\n`;
    const dataset = writeDataset({
      'n/task.toml': '[environment]\ndocker_image = "berth-base:bookworm"\nworkdir = "/app"\n' +
        `[[steps]]\nname = "allowlisted"\n[steps.agent]\nnetwork_mode = "allowlist"\nallowed_hosts = ["${aIp}"]\ntimeout_sec = 120\n` +
        `[[steps]]\nname = "offline"\n[steps.agent]\nnetwork_mode = "no-network"\n[steps.verifier]\nnetwork_mode = "allowlist"\nallowed_hosts = ["${bIp}/32"]\n`,
      'n/steps/allowlisted/instruction.md': 'one\n',
      // The proxy dies with the worker: the agent keeps asking until the restarted worker serves it again.
      'n/steps/allowlisted/solution/solve.sh': `#!/bin/bash\n${PROBE}\ntouch /app/started\nsleep 12\nfor i in $(seq 60); do r=$(probe ${a} env); [ "$r" = reach ] && break; sleep 1; done\necho "$r" > /app/a1\nprobe ${b} env > /app/b1\n`,
      'n/steps/allowlisted/tests/test.sh': test(`is /app/a1 reach\nis /app/b1 refused:403\nnow ${b} direct reach`),
      'n/steps/offline/instruction.md': 'two\n',
      'n/steps/offline/solution/solve.sh': `#!/bin/bash\n${PROBE}\nprobe ${a} direct > /app/a2\n`,
      'n/steps/offline/tests/test.sh': test(`is /app/a2 blocked\nnow ${b} env reach\nnow ${a} env refused:403\nnow ${a} direct blocked`),
    });
    connection = await Connection.connect({ address: '127.0.0.1:7233' });
    const client = new Client({ connection });
    workers.push(startWorkerProcess(env));
    const handle = await startBatch({ dataset, resultsDir: mkdtempSync(join(tmpdir(), 'berth-netcrash-')), taskQueue: env.BERTH_TASK_QUEUE, client });
    const workflowId = `berth/${handle.batchId}/n/1`;
    await waitForFileInEpisode(workflowId, '/app/started', 90_000, "step 1's agent process");
    workers[0]!.kill9();
    workers.push(startWorkerProcess(env));

    const row = (await handle.wait()).rows[0]!;
    expect(row.failure_reason).toBeNull();
    expect(row.turns.map((t) => [t.step, t.reward])).toEqual([['allowlisted', 1], ['offline', 1]]);
    await noContainersLeft(`berth.workflow=${workflowId}`);
  }, 300_000);

  // The same for a Compose group (issue 14, "every service of a group"): killed during an offline agent phase, the
  // restarted worker's verifier phase has main and its sidecar online again, and the next step's agent offline.
  it('a Compose group: every service gets the right network in the phases after the restart', async () => {
    servers ??= await startTestServers(`t14-crash-${randomBytes(3).toString('hex')}`);
    const { a } = servers;
    const head = `${PROBE}\n${SIDE}\nok=1\nfail() { echo "FAILED: $*"; ok=0; }\nis() { [ "$(cat $1)" = "$2" ] || fail "$1: $(cat $1), wanted $2"; }\nnow() { got=$("$@"); [ "$got" = "$WANT" ] || fail "$*: $got, wanted $WANT"; }\n`;
    const test = (body: string) => `#!/bin/bash\n${head}${body}\necho $ok > /logs/verifier/reward.txt\n`;
    const dataset = writeDataset({
      'g/task.toml': '[environment]\ndocker_image = "berth-base:bookworm"\nworkdir = "/app"\n' +
        '[[steps]]\nname = "offline"\n[steps.agent]\nnetwork_mode = "no-network"\ntimeout_sec = 120\n' +
        '[[steps]]\nname = "offline-again"\n[steps.agent]\nnetwork_mode = "no-network"\n',
      'g/environment/docker-compose.yaml': PROBING_SIDECAR_COMPOSE,
      'g/steps/offline/instruction.md': 'one\n',
      'g/steps/offline/solution/solve.sh': `#!/bin/bash\n${head}touch /app/started\nsleep 12\nprobe ${a} direct > /app/a1\nside ${a} direct > /app/s1\n`,
      'g/steps/offline/tests/test.sh': test(`is /app/a1 blocked\nis /app/s1 blocked\nWANT=reach now probe ${a} direct\nWANT=reach now side ${a} direct`),
      'g/steps/offline-again/instruction.md': 'two\n',
      'g/steps/offline-again/solution/solve.sh': `#!/bin/bash\n${head}probe ${a} direct > /app/a2\nside ${a} direct > /app/s2\nprobe http://side:8080/ direct > /app/n2\n`,
      'g/steps/offline-again/tests/test.sh': test(`is /app/a2 blocked\nis /app/s2 blocked\nis /app/n2 reach\nWANT=reach now side ${a} direct`),
    });
    connection ??= await Connection.connect({ address: '127.0.0.1:7233' });
    const client = new Client({ connection });
    for (const w of workers.splice(0)) await w.stop();
    workers.push(startWorkerProcess(env));
    const handle = await startBatch({ dataset, resultsDir: mkdtempSync(join(tmpdir(), 'berth-netcrash-')), taskQueue: env.BERTH_TASK_QUEUE, client });
    const workflowId = `berth/${handle.batchId}/g/1`;
    await waitForFileInEpisode(workflowId, '/app/started', 120_000, "step 1's agent process in main", 'main');
    workers[workers.length - 1]!.kill9();
    workers.push(startWorkerProcess(env));

    const row = (await handle.wait()).rows[0]!;
    expect(row.failure_reason).toBeNull();
    expect(row.turns.map((t) => [t.step, t.reward])).toEqual([['offline', 1], ['offline-again', 1]]);
    await noContainersLeft(`berth.workflow=${workflowId}`);
  }, 300_000);
});
