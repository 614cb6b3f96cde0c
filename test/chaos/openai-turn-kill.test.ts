import { afterAll, describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startBatch } from '../../src/client/batch.ts';
import { BASE_TOML, writeDataset } from '../helpers/tasks.ts';
import { noContainersLeft, waitForFileInEpisode } from '../helpers/docker.ts';
import { ownWorkerQueues } from '../helpers/worker-process.ts';
import { bashCall, finalMessage, startScriptedServer } from '../agents/scripted-openai.ts';

// The openai agent's turn is one activity (src/activities/openai-turn.ts). A worker killed with -9 while its second
// bash call runs: the retried attempt resumes from the conversation file, so the model calls answered before the
// kill are not sent again and the bash call whose output was recorded does not run again. The call cut short by the
// kill (no output recorded) runs again: it appends to its own file, which the test does not count.
const COMMANDS = ['echo one >> /app/runs', 'echo two >> /app/cut; touch /app/started; sleep 8', 'echo three >> /app/runs'];
const dataset = () => writeDataset({
  'calls/task.toml': BASE_TOML, 'calls/instruction.md': 'Run the three commands.\n',
  'calls/tests/test.sh': '#!/bin/bash\n[ "$(cat /app/runs)" = "$(printf \'one\\nthree\')" ] && echo 1 > /logs/verifier/reward.txt || echo 0 > /logs/verifier/reward.txt\n',
});

describe('a worker killed with -9 inside an openai turn (one activity, durable call by call)', () => {
  const own = ownWorkerQueues('oaikill');
  afterAll(() => own.stop());

  it('resumes from the conversation file: no recorded model answer asked again, no recorded bash call run again', async () => {
    // The answer depends on the conversation so far (its assistant messages), so a call sent again gets the same answer.
    const server = await startScriptedServer((_n, req) => {
      const made = req.body.messages.filter((m) => m['role'] === 'assistant').length;
      return made < COMMANDS.length ? bashCall(`call_${made + 1}`, COMMANDS[made]!) : finalMessage('all three ran');
    });
    try {
      const client = await own.client();
      own.startWorker();
      const handle = await startBatch({
        dataset: dataset(), agent: 'openai', resultsDir: mkdtempSync(join(tmpdir(), 'berth-oaikill-')),
        agentArgs: { base_url: server.baseUrl, model: 'scripted-model' }, taskQueue: own.env.BERTH_TASK_QUEUE, client,
      });
      const workflowId = `berth/${handle.batchId}/calls/1`;
      await waitForFileInEpisode(workflowId, '/app/started', 120_000, 'the second bash call');
      own.workers[0]!.kill9();
      own.startWorker();

      const row = (await handle.wait()).rows[0]!;
      expect(row).toMatchObject({ reward: 1, mask_sample: false, response_text: 'all three ran' });
      expect(row.usage).toMatchObject({ calls: 4 });
      // Each model call reached the endpoint once: by how many answers its conversation already held.
      const sent = server.requests.map((r) => r.body.messages.filter((m) => m['role'] === 'assistant').length);
      expect(sent).toEqual([0, 1, 2, 3]);
      const records = readFileSync(join(row.logs_dir!, 'turn-1', 'agent', 'conversation.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { message: { role: string } });
      expect(records.map((r) => r.message.role)).toEqual(['system', 'user', 'assistant', 'tool', 'assistant', 'tool', 'assistant', 'tool', 'assistant']);

      // The kill landed in the turn's one activity, which finished on a later attempt.
      const history = await client.workflow.getHandle(`${workflowId}/turn-1`).fetchHistory();
      const events = history.events ?? [];
      const turnId = events.find((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'openaiTurn')?.eventId;
      const attempts = events.filter((e) => e.activityTaskStartedEventAttributes && String(e.activityTaskStartedEventAttributes.scheduledEventId) === String(turnId))
        .map((e) => e.activityTaskStartedEventAttributes!.attempt);
      expect(attempts.at(-1)).toBeGreaterThan(1);
      await noContainersLeft(`berth.workflow=${workflowId}`);
    } finally {
      await server.close();
    }
  }, 300_000);
});
