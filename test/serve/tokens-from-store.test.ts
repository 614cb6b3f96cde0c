// Issue 39 and 41: token records outlive the worker host. A rollout run and a NeMo Gym /run whose batch names a results
// store (a real SeaweedFS), the openai agent on Docker calling a fake vLLM through the gateway. After the episodes
// closed, the worker that ran them stops and their logs folders are removed; another machine's worker (workflows only,
// no host) answers the run's queries. berth serve still hands out every row's exact token ids and logprobs, inline in
// the group stream and in the /run answer, read from the store; with no store it says why it cannot.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client, Connection } from '@temporalio/client';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { storedAttemptOf } from '../../src/client/episode-tokens.ts';
import { storeLocationOf } from '../../src/config/results-store.ts';
import { temporalAddress } from '../../src/config/temporal.ts';
import { fileKey, manifestKey, readManifest, ResultsStore } from '../../src/store/index.ts';
import { episodeRecords } from '../../src/serve/gym-run.ts';
import { startServe, type Serving } from '../../src/serve/server.ts';
import type { Group, SampleRow } from '../../src/rollouts/types.ts';
import type { TokenRecord } from '../../src/tokens/index.ts';
import type { ResultRow } from '../../src/workflows/types.ts';
import { repoRoot } from '../helpers/cli.ts';
import { FakePolicy, type SeenRequest } from '../helpers/fake-policy.ts';
import { postJson } from '../helpers/rollout-groups.ts';
import { startS3Server, type S3Server } from '../helpers/s3-server.ts';
import { echoTask, writeDataset } from '../helpers/tasks.ts';
import { startScriptedWorker, startTestWorkers, type TestCluster } from '../helpers/temporal.ts';

type Output = Array<Record<string, unknown>>;

/** One tool call, then a final answer: two policy calls per episode. */
const engineScript = ({ messages }: { messages: Array<Record<string, unknown>> }) =>
  (messages.at(-1)?.['role'] === 'tool' ? { content: 'Wrote it.' } : { content: 'Writing.', toolCalls: [{ name: 'bash', arguments: { command: 'echo ok > /app/out.txt' } }] });

/** What the engine generated per policy call (not the probe's), as a sorted multiset (samples may generate the same). */
const generatedBy = (seen: SeenRequest[]): string[] =>
  seen.filter((s) => s.body['return_token_ids'] === true && s.body['top_logprobs'] !== 5).map((s) => JSON.stringify([s.promptTokenIds, s.generationTokenIds, s.logprobs])).sort();
const generatedIn = (records: TokenRecord[]): string[] =>
  records.map((r) => JSON.stringify([r.prompt_token_ids, r.generation_token_ids, r.generation_log_probs])).sort();
/** The generated messages of a /run answer: their token ids and logprobs. */
const tokensOfAnswer = (output: Output) => output.filter((i) => i['generation_token_ids'])
  .map((m) => ({ prompt: m['prompt_token_ids'], generated: m['generation_token_ids'], logprobs: m['generation_log_probs'] }));

describe('token records from the results store once the worker host is gone (berth serve, real worker, SeaweedFS, fake vLLM)', () => {
  const suffix = randomBytes(3).toString('hex');
  const configFile = join(mkdtempSync(join(tmpdir(), 'berth-tokens-store-')), 'berth.toml');
  const previousConfig = process.env.BERTH_CONFIG;
  let s3: S3Server;
  let runEngine: FakePolicy;
  let gymEngine: FakePolicy;
  let cluster: TestCluster | undefined;
  let elsewhere: { stop(): Promise<void> } | undefined;
  let connection: Connection;
  let client: Client;
  let serving: Serving;
  /** The shared queue berth serve starts episodes on (the test workers' own; another machine's worker polls it later). */
  let taskQueue = '';
  const dataset = writeDataset(echoTask('ok'));

  beforeAll(async () => {
    s3 = await startS3Server();
    writeFileSync(configFile, s3.berthToml(`tokens-${suffix}`));
    // The run's and /run's episodes carry the store's URL (read from berth.toml where they are started); the worker's
    // upload and berth serve's reads use its keys.
    process.env.BERTH_CONFIG = configFile;
    [runEngine, gymEngine] = await Promise.all([new FakePolicy({ model: 'policy-1b', script: engineScript }).start(), new FakePolicy({ model: 'policy-1b', script: engineScript }).start()]);
    cluster = await startTestWorkers('tokstore');
    taskQueue = cluster.taskQueue;
    // berth serve's own Temporal connection: it outlives the workers.
    connection = await Connection.connect({ address: temporalAddress().address });
    client = new Client({ connection });
    serving = await startServe({
      client, taskQueue, port: 0, dataset, agent: 'openai', gymBatch: `gym-store-${suffix}`,
      policy: { endpoint: `${gymEngine.url}/v1`, model: 'policy-1b' },
    });
  }, 600_000);
  afterAll(async () => {
    await serving?.close();
    await cluster?.stop();
    await elsewhere?.stop();
    await connection?.close();
    await runEngine?.stop();
    await gymEngine?.stop();
    await s3?.stop();
    if (previousConfig === undefined) delete process.env.BERTH_CONFIG; else process.env.BERTH_CONFIG = previousConfig;
  }, 180_000);

  it('the group stream and /run carry the exact token ids and logprobs the engine produced, read from the store after the worker stopped and its logs folders were removed', async () => {
    const key = `tok-${suffix}`;
    const started = await postJson(`${serving.url}/runs`, {
      key, tasks: ['ok'], n: 2, concurrency: 2, agent: 'openai', agent_args: { base_url: `${runEngine.url}/v1`, model: 'policy-1b' },
      policy: { endpoint: `${runEngine.url}/v1`, model: 'policy-1b', version: 0 },
    });
    expect(started.status).toBe(201);
    const gymRequest = { task_name: 'ok', _ng_task_index: 0, _ng_rollout_index: 0, responses_create_params: { input: [] } };
    const first = await postJson(`${serving.url}/run`, gymRequest);
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ reward: 1, mask_sample: false });
    const firstTokens = tokensOfAnswer(first.body.response.output as Output);
    expect(firstTokens).toHaveLength(2);
    expect(firstTokens.map((t) => JSON.stringify([t.prompt, t.generated, t.logprobs])).sort()).toEqual(generatedBy(gymEngine.seen));

    // The group, with its tokens as the worker host's disk has them.
    let local: Group[] = [];
    await expect.poll(async () => (local = (await (await fetch(`${serving.url}/runs/${key}/groups?after=0&follow=0&tokens=1`)).json()) as Group[]).length,
      { timeout: 300_000, interval: 1000 }).toBe(1);
    const rows = local[0]!.rows;
    expect(rows.map((r) => [r.valid, r.reward, r.training?.calls])).toEqual([[true, 1, 2], [true, 1, 2]]);
    for (const r of rows) expect(existsSync(r.tokens!), r.tokens!).toBe(true);
    expect(generatedIn(rows.flatMap((r) => r.token_records!))).toEqual(generatedBy(runEngine.seen));
    const gymRow = await client.workflow.getHandle(first.body.berth_workflow_id as string).result() as ResultRow;
    expect(gymRow.store_key).toMatch(new RegExp(`^tokens-${suffix}/gym-store-${suffix}/episodes/`));

    // The worker host goes: its worker stops and the episodes' logs folders are removed. A worker of another machine
    // (workflows only, no host activities) answers the run's queries.
    await cluster!.stop();
    cluster = undefined;
    for (const dir of [...rows.map((r) => r.logs_dir!), gymRow.logs_dir!]) rmSync(dir, { recursive: true, force: true });
    for (const r of rows) expect(existsSync(r.tokens!)).toBe(false);
    elsewhere = await startScriptedWorker(taskQueue, {});

    // The stream (NDJSON) with tokens inline: the same records, now from the store.
    const streamed = await readGroupsWithTokens(serving.url, key);
    expect(streamed).toHaveLength(1);
    const fromStore = streamed[0]!.rows;
    for (const r of fromStore) expect(r.tokens_error).toBeUndefined();
    expect(fromStore.map((r) => r.token_records)).toEqual(rows.map((r) => r.token_records));
    expect(fromStore.map((r) => r.token_rollout)).toEqual(rows.map((r) => r.token_rollout));
    expect(generatedIn(fromStore.flatMap((r) => r.token_records!))).toEqual(generatedBy(runEngine.seen));
    for (const r of fromStore) {
      // The linked sequence: one sequence of both calls, its generated tokens masked 1.
      expect(r.token_rollout).toMatchObject({ calls: 2, masked: null });
      const generated = r.token_records!.reduce((n, c) => n + c.generation_token_ids.length, 0);
      expect(r.token_rollout!.sequences.flatMap((s) => s.loss_mask).filter((m) => m === 1)).toHaveLength(generated);
    }

    // The same /run again is the same (closed) episode: its answer's tokens now come from the store.
    const again = await postJson(`${serving.url}/run`, gymRequest);
    expect(again.status).toBe(200);
    expect(again.body.berth_workflow_id).toBe(first.body.berth_workflow_id);
    expect(tokensOfAnswer(again.body.response.output as Output)).toEqual(firstTokens);

    // The Python client on this other machine gets the same records inline.
    const py = await python(`
import json, sys
from berth_rollouts import BerthRollouts
groups = list(BerthRollouts(sys.argv[1]).run(sys.argv[2]).groups(after=0, tokens=True))
print(json.dumps([[{"records": r.token_records, "error": r.tokens_error} for r in g.rows] for g in groups]))
`, [serving.url, key]);
    expect(JSON.parse(py)).toEqual([fromStore.map((r) => ({ records: r.token_records, error: null }))]);

    // A file in the store that differs from its manifest is never handed out as tokens: the row says so.
    const store = new ResultsStore({ ...storeLocationOf(`s3://${s3.bucket}/tokens-${suffix}`), endpoint: s3.endpoint, region: s3.region, pathStyle: true, keepLocal: true },
      { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey });
    try {
      const tampered = fromStore[0]!;
      const attempt = storedAttemptOf(store.settings, { batchId: `rollout-${key}`, workflowId: tampered.workflow_id!, logsDir: tampered.logs_dir });
      // Wherever the file is: inside the manifest (a small one) or an object of its own.
      const wrong = '{"generation_token_ids":[1]}\n';
      const manifest = (await readManifest(store, attempt!))!;
      const entry = manifest.files.find((f) => f.path === 'token-records.jsonl')!;
      if (entry.inline === undefined) await store.putText(fileKey(attempt!, 'token-records.jsonl')!, wrong);
      else await store.putText(manifestKey(attempt!), JSON.stringify({ ...manifest, files: manifest.files.map((f) => (f === entry ? { ...f, inline: Buffer.from(wrong).toString('base64') } : f)) }));
      const [group] = (await (await fetch(`${serving.url}/runs/${key}/groups?after=0&follow=0&tokens=1`)).json()) as Group[];
      expect(group!.rows[0]).toMatchObject({ token_records: null, tokens_error: expect.stringMatching(/token-records\.jsonl in the store does not match its manifest/) });
      expect(group!.rows[1]!.token_records).toEqual(fromStore[1]!.token_records);
    } finally {
      store.destroy();
    }

    // Without a store, a server on this machine cannot find them, and says why (never an answer without tokens).
    const bare = await startServe({ client, taskQueue, port: 0, dataset, agent: 'openai', store: null });
    try {
      const [group] = (await (await fetch(`${bare.url}/runs/${key}/groups?after=0&follow=0&tokens=1`)).json()) as Group[];
      for (const r of group!.rows as SampleRow[]) {
        expect(r.token_records).toBeNull();
        expect(r.tokens_error).toMatch(/token-records\.jsonl of .* is not on this machine .* berth\.toml names no results store/);
      }
    } finally {
      await bare.close();
    }
    // /run's reader likewise: HTTP 503 naming why (its task loading needs a host worker, so the reader is called here).
    await expect(episodeRecords(gymRow, `gym-store-${suffix}`, null)).rejects.toMatchObject({ status: 503, message: expect.stringMatching(/token records cannot be read: .*not on this machine/) });
  }, 900_000);
});

async function readGroupsWithTokens(url: string, key: string): Promise<Group[]> {
  const r = await fetch(`${url}/runs/${key}/groups?after=0&tokens=1`);
  expect(r.headers.get('content-type')).toBe('application/x-ndjson');
  return (await r.text()).split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l) as Group);
}

function python(script: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile('python3', ['-c', script, ...args], { env: { ...process.env, PYTHONPATH: join(repoRoot, 'clients', 'python') }, timeout: 120_000, maxBuffer: 64 * 1024 * 1024 },
      (err, stdout, stderr) => (err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(stdout)));
  });
}
