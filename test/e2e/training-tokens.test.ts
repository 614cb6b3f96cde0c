// A real episode in training mode on the Docker engine: the openai agent's model calls go through the worker's
// gateway to a fake vLLM policy; the token records land beside the episode's logs (never in history), linked into
// one sequence, and the row says where they are and which policy version served them.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startBatch } from '../../src/client/batch.ts';
import { parseTokenRecords, type EpisodeTraining } from '../../src/tokens/index.ts';
import { startTestWorkers, type TestCluster } from '../helpers/temporal.ts';
import { echoTask, writeDataset } from '../helpers/tasks.ts';
import { FakePolicy } from '../helpers/fake-policy.ts';

describe('training mode, a real episode (issue 41)', () => {
  let cluster: TestCluster;
  let engine: FakePolicy;
  beforeAll(async () => {
    engine = await new FakePolicy({
      model: 'policy-7b', version: 'w3',
      script: ({ messages }) => (messages.at(-1)?.['role'] === 'tool'
        ? { content: 'done: wrote out.txt' }
        : { content: 'Writing it.', toolCalls: [{ name: 'bash', arguments: { command: 'echo ok > /app/out.txt' } }] }),
    }).start();
    cluster = await startTestWorkers('training');
  });
  afterAll(async () => {
    await cluster?.stop();
    await engine?.stop();
  });

  const training = (): EpisodeTraining => ({ runWorkflowId: '', endpoint: `${engine.url}/v1`, model: 'policy-7b', version: 3, sampling: { temperature: 0.6 } });

  it('the openai agent\'s calls leave exact token records beside the logs, linked into one sequence, stamped with the version', async () => {
    const handle = await startBatch({
      dataset: writeDataset(echoTask('write-ok')), agent: 'openai', resultsDir: mkdtempSync(join(tmpdir(), 'berth-training-')),
      agentArgs: { base_url: `${engine.url}/v1`, model: 'policy-7b' }, training: training(),
      taskQueue: cluster.taskQueue, client: cluster.client,
    });
    const row = (await handle.wait()).rows[0]!;
    expect(row).toMatchObject({ reward: 1, mask_sample: false, response_text: 'done: wrote out.txt' });
    expect(row.training).toEqual({ tokens: 'token-records.jsonl', calls: 2, first_version: 3, last_version: 3, exact: true });

    const records = parseTokenRecords(readFileSync(join(row.logs_dir!, 'token-records.jsonl'), 'utf8'));
    expect(records).toHaveLength(2);
    const asked = engine.seen.filter((s) => s.body['return_token_ids'] === true);
    expect(asked).toHaveLength(2);
    for (const [i, r] of records.entries()) {
      expect(r).toMatchObject({ rollout_id: row.workflow_id, model: 'policy-7b', policy_version: 3, dialect: 'openai-chat', capture_error: null });
      expect(r.prompt_token_ids).toEqual(asked[i]!.promptTokenIds);
      expect(asked[i]!.body).toMatchObject({ logprobs: true, temperature: 0.6 });
    }
    const rollout = JSON.parse(readFileSync(join(row.logs_dir!, 'token-rollout.json'), 'utf8')) as { masked: unknown; sequences: Array<{ call_ids: string[]; loss_mask: number[] }> };
    expect(rollout.masked).toBeNull();
    expect(rollout.sequences.map((s) => s.call_ids)).toEqual([records.map((r) => r.model_call_id)]);
    expect(rollout.sequences[0]!.loss_mask.filter((m) => m === 1)).toHaveLength(records[0]!.generation_token_ids.length + records[1]!.generation_token_ids.length);

    // Token arrays never enter history: neither the episode's nor its turn's.
    const needle = JSON.stringify(records[1]!.prompt_token_ids.slice(0, 12)).slice(1, -1);
    for (const id of [row.workflow_id, `${row.workflow_id}/turn-1`]) {
      const history = JSON.stringify(await cluster.client.workflow.getHandle(id).fetchHistory());
      expect(history).not.toContain('prompt_token_ids');
      expect(history).not.toContain(needle);
    }
  });

  it('an agent whose model calls would bypass the gateway is refused in training mode before any sandbox, with the reason', async () => {
    const started = startBatch({
      dataset: writeDataset(echoTask('write-ok')), agent: 'command', agentArgs: { cmd: 'true' }, resultsDir: mkdtempSync(join(tmpdir(), 'berth-training-')),
      training: training(), taskQueue: cluster.taskQueue, client: cluster.client,
    });
    await expect(started).rejects.toThrow(/training mode refused: the command agent runs a CLI of the image whose model calls, if any, bypass Berth's gateway/);
    const open = await cluster.client.workflow.list({ query: `TaskQueue = '${cluster.taskQueue}' AND WorkflowType = 'episodeWorkflow'` });
    const agents: string[] = [];
    for await (const w of open) agents.push(w.workflowId);
    // Only the first test's episode ran: the refused batch started none.
    expect(agents).toHaveLength(1);
  });
});
