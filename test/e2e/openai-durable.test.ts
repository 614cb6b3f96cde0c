import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startBatch } from '../../src/client/batch.ts';
import { runChain } from '../helpers/histories.ts';
import { validateAtif } from '../../src/trajectory/atif.ts';
import { startTestWorkers, type TestCluster } from '../helpers/temporal.ts';
import { echoTask, writeDataset } from '../helpers/tasks.ts';
import { recordHistory } from '../helpers/histories.ts';
import { bashCall, contextTooLong, finalMessage, rateLimited, startScriptedServer } from '../agents/scripted-openai.ts';

// The openai agent inside a real episode: its turn is a child workflow whose model and bash calls run in one
// activity on the sandbox's host, against a scripted Chat Completions server speaking the real protocol.
describe('openai agent, durable (issue 7)', () => {
  let cluster: TestCluster;
  beforeAll(async () => {
    process.env.BERTH_TEST_OPENAI_KEY = 'sk-test-secret-123456';
    cluster = await startTestWorkers('openai');
  });
  afterAll(async () => { await cluster?.stop(); });

  const run = async (baseUrl: string) => {
    const handle = await startBatch({
      dataset: writeDataset(echoTask('write-ok')), agent: 'openai', resultsDir: mkdtempSync(join(tmpdir(), 'berth-openai-')),
      agentArgs: { base_url: baseUrl, model: 'scripted-model', api_key_env: 'BERTH_TEST_OPENAI_KEY' },
      taskQueue: cluster.taskQueue, client: cluster.client,
    });
    return { handle, summary: await handle.wait() };
  };

  it('completes a task through a 429, a tool call and a final answer; the key never reaches history or files', async () => {
    const server = await startScriptedServer([rateLimited, bashCall('call_1', 'echo ok > /app/out.txt'), finalMessage('done: wrote out.txt')]);
    try {
      const { summary } = await run(server.baseUrl);
      const row = summary.rows[0]!;
      expect(row).toMatchObject({ reward: 1, mask_sample: false, response_text: 'done: wrote out.txt' });
      expect(row.usage).toMatchObject({ calls: 2 });
      expect(server.requests).toHaveLength(3);
      expect(server.requests[2]!.headers.authorization).toBe('Bearer sk-test-secret-123456');
      const agentDir = join(row.logs_dir!, 'turn-1', 'agent');
      const conversation = readFileSync(join(agentDir, 'conversation.jsonl'), 'utf8');
      expect(conversation).toContain('echo ok > /app/out.txt');
      expect(conversation).not.toContain('sk-test-secret');
      expect(validateAtif(JSON.parse(readFileSync(join(agentDir, 'trajectory.json'), 'utf8')))).toEqual({ ok: true });
      const child = cluster.client.workflow.getHandle(`${row.workflow_id}/turn-1`);
      const history = await child.fetchHistory();
      const scheduled = (history.events ?? []).flatMap((e) => e.activityTaskScheduledEventAttributes ? [e.activityTaskScheduledEventAttributes] : []);
      // The turn's calls are one activity, looping on the conversation file (patch openai-turn-in-one-activity).
      expect(scheduled.map((a) => a.activityType?.name)).toEqual(['openaiStart', 'openaiTurn']);
      // Every activity of the turn runs on the sandbox's host, beside the conversation file: hosts share no storage
      // (docs/deployment.md, What must be shared).
      expect(new Set(scheduled.map((a) => a.taskQueue?.name))).toEqual(new Set([cluster.hostQueue]));
      expect(JSON.stringify(history)).not.toContain('sk-test-secret');
      await recordHistory(cluster.client, row.workflow_id, 'episode-openai');
      await recordHistory(cluster.client, `${row.workflow_id}/turn-1`, 'openai-turn-one');
    } finally {
      await server.close();
    }
  });

  it('a context-length error ends the turn with a clear reason and verification still runs', async () => {
    const server = await startScriptedServer([contextTooLong]);
    try {
      const { summary } = await run(server.baseUrl);
      const row = summary.rows[0]!;
      expect(row).toMatchObject({ reward: 0, mask_sample: false });
      expect(readFileSync(join(row.logs_dir!, 'turn-1', 'agent', 'stop-reason.txt'), 'utf8')).toMatch(/context length exceeded: .*maximum context length/);
    } finally {
      await server.close();
    }
  });

  it('a long turn (29 model calls) stays one activity in one small history and finishes', async () => {
    const server = await startScriptedServer((n) => (n < 27 ? bashCall(`call_${n}`, `echo ${n} >> /app/calls.txt`)
      : n === 27 ? bashCall('call_last', 'echo ok > /app/out.txt') : finalMessage('done after many calls')));
    try {
      const { summary } = await run(server.baseUrl);
      const row = summary.rows[0]!;
      expect(row).toMatchObject({ reward: 1, response_text: 'done after many calls' });
      expect(row.usage).toMatchObject({ calls: 29 });
      expect(await runChain(cluster.client, `${row.workflow_id}/turn-1`)).toHaveLength(1);
      const events = (await cluster.client.workflow.getHandle(`${row.workflow_id}/turn-1`).fetchHistory()).events ?? [];
      expect(events.filter((e) => e.activityTaskScheduledEventAttributes).map((e) => e.activityTaskScheduledEventAttributes!.activityType?.name)).toEqual(['openaiStart', 'openaiTurn']);
      expect(events.length).toBeLessThan(40);
    } finally {
      await server.close();
    }
  }, 180_000);
});
