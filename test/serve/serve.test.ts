import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { execFile } from 'node:child_process';
import Docker from 'dockerode';
import { join } from 'node:path';
import { startTestWorkers, type TestCluster } from '../helpers/temporal.ts';
import { noContainersLeft } from '../helpers/docker.ts';
import { waitUntil } from '../helpers/worker-process.ts';
import { BASE_TOML, echoTask, writeDataset } from '../helpers/tasks.ts';
import { startServe, type Serving } from '../../src/serve/server.ts';
import { FakePolicy } from '../helpers/fake-policy.ts';
import type { Group, RunStatus } from '../../src/rollouts/types.ts';

// A task whose seed always fails on Berth's side (its healthcheck never passes): harbor:seed_failed, masked.
const lostTask = (id: string) => ({
  [`${id}/task.toml`]: `${BASE_TOML}[environment.healthcheck]\ncommand = "false"\ninterval_sec = 0.2\ntimeout_sec = 2\nretries = 1\n`,
  [`${id}/instruction.md`]: 'never runs\n',
  [`${id}/solution/solve.sh`]: '#!/bin/bash\ntrue\n',
  [`${id}/tests/test.sh`]: '#!/bin/bash\necho 1 > /logs/verifier/reward.txt\n',
});

const POLICY = { endpoint: 'http://127.0.0.1:9/v1', model: 'fake' };

describe('berth serve: rollout runs and NeMo Gym /run (real Temporal, real Docker)', () => {
  let cluster: TestCluster;
  let serving: Serving;
  const post = async (path: string, body: unknown) => {
    const r = await fetch(`${serving.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    return { status: r.status, body: await r.json() as any };
  };
  /** Reads the NDJSON stream until `count` groups arrived (or the stream ends). */
  const readGroups = async (key: string, after: number | null, count: number): Promise<Group[]> => {
    const ctl = new AbortController();
    const r = await fetch(`${serving.url}/runs/${key}/groups${after === null ? '' : `?after=${after}`}`, { signal: ctl.signal });
    expect(r.headers.get('content-type')).toBe('application/x-ndjson');
    const groups: Group[] = [];
    let buf = '';
    const decoder = new TextDecoder();
    const reader = r.body!.getReader();
    while (groups.length < count) {
      const { value, done } = await reader.read();
      if (done) break;
      buf += decoder.decode(value, { stream: true });
      let nl: number;
      while ((nl = buf.indexOf('\n')) >= 0) {
        groups.push(JSON.parse(buf.slice(0, nl)) as Group);
        buf = buf.slice(nl + 1);
      }
    }
    await reader.cancel().catch(() => undefined);
    ctl.abort();
    return groups;
  };

  beforeAll(async () => {
    cluster = await startTestWorkers('serve');
    const dataset = writeDataset({ ...echoTask('ok'), ...lostTask('lost') });
    serving = await startServe({ client: cluster.client, taskQueue: cluster.taskQueue, port: 0, dataset, agent: 'oracle', gymBatch: `gym-${randomBytes(3).toString('hex')}`, policy: POLICY });
  });
  afterAll(async () => {
    await serving?.close();
    await cluster?.stop();
  });

  it('a run under a key: the same key answers the same run; complete groups stream from a cursor and an acknowledged group never comes again', async () => {
    const key = `t-${randomBytes(4).toString('hex')}`;
    const body = { key, tasks: ['ok'], n: 2, policy: POLICY, group_policy: { kind: 'mask' }, concurrency: 4 };
    const first = await post('/runs', body);
    expect(first.status).toBe(201);
    expect(first.body).toMatchObject({ run_id: key, created: true });
    const again = await post('/runs', body);
    expect(again.body).toMatchObject({ run_id: key, created: false, workflow_id: first.body.workflow_id });
    await post(`/runs/${key}/work`, { tasks: ['ok'], n: 2 });
    const groups = await readGroups(key, 0, 2);
    expect(groups.map((g) => g.seq)).toEqual([1, 2]);
    for (const g of groups) {
      expect(g).toMatchObject({ task_id: 'ok', masked: false });
      expect(g.rows.map((r) => [r.valid, r.reward, r.policy_version])).toEqual([[true, 1, 0], [true, 1, 0]]);
    }
    expect((await post(`/runs/${key}/ack`, { seq: 1 })).body).toEqual({ acked: 1 });
    // Reconnecting without a cursor resumes after the last acknowledged group; asking from 0 gives nothing acknowledged.
    expect((await readGroups(key, null, 1)).map((g) => g.seq)).toEqual([2]);
    expect((await readGroups(key, 0, 1)).map((g) => g.seq)).toEqual([2]);
    expect((await post(`/runs/${key}/ack`, { seq: 2 })).body).toEqual({ acked: 2 });
    await expect.poll(async () => ((await (await fetch(`${serving.url}/runs/${key}`)).json()) as RunStatus).state, { timeout: 20_000 }).toBe('done');
    await noContainersLeft(`berth.batch=rollout-${key}`);
  });

  it('retry replaces a masked sample up to k times, then masks the group with a placeholder row; partial keeps a per-sample mask', async () => {
    const retryKey = `r-${randomBytes(4).toString('hex')}`;
    await post('/runs', { key: retryKey, tasks: ['lost'], n: 1, policy: POLICY, group_policy: { kind: 'retry', max_retries: 1 } });
    const partialKey = `p-${randomBytes(4).toString('hex')}`;
    await post('/runs', { key: partialKey, n: 1, policy: POLICY, group_policy: { kind: 'partial' } });
    const [retried] = await readGroups(retryKey, 0, 1);
    expect(retried).toMatchObject({ seq: 1, task_id: 'lost', masked: true });
    expect(retried!.rows).toHaveLength(1);
    expect(retried!.rows[0]).toMatchObject({ attempt: 2, valid: false, mask_sample: true, reward: null, failure_kind: 'harbor:seed_failed' });
    const status = (await (await fetch(`${serving.url}/runs/${retryKey}`)).json()) as RunStatus;
    expect(status.counters).toMatchObject({ retried: 1, masked: 1 });
    const partial = await readGroups(partialKey, 0, 2);
    const byTask = Object.fromEntries(partial.map((g) => [g.task_id, g]));
    expect(byTask.ok).toMatchObject({ masked: false, rows: [{ valid: true, reward: 1 }] });
    expect(byTask.lost).toMatchObject({ masked: false, rows: [{ valid: false, mask_sample: true, reward: null }] });
  });

  it('policy version, drain and resume are kept in the run; versions never go back; a bad request names the fix', async () => {
    const key = `v-${randomBytes(4).toString('hex')}`;
    await post('/runs', { key, tasks: ['ok'], n: 1, policy: POLICY, keep_open: true, max_staleness: 1 });
    expect((await post(`/runs/${key}/policy`, { version: 3, endpoint: 'http://127.0.0.1:10/v1' })).body)
      .toMatchObject({ version: 3, endpoint: { baseUrl: 'http://127.0.0.1:10' }, draining: false });
    expect((await post(`/runs/${key}/drain`, {})).body).toMatchObject({ draining: true });
    expect((await post(`/runs/${key}/resume`, {})).body).toMatchObject({ draining: false });
    const back = await post(`/runs/${key}/policy`, { version: 2 });
    expect(back.status).toBe(422);
    expect(back.body.error).toContain('versions only go up');
    // An agent whose calls would bypass the gateway is refused when the run is asked for, before any episode.
    const uncaptured = await post('/runs', { key: `cmd-${randomBytes(3).toString('hex')}`, n: 1, agent: 'command', agent_args: { cmd: 'true' }, policy: POLICY });
    expect(uncaptured.status).toBe(422);
    expect(uncaptured.body.error).toMatch(/training mode refused: the command agent runs a CLI of the image/);
    const bad = await post('/runs', { key: 'bad key!', n: 1, policy: POLICY });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toContain('docs/training.md');
    await readGroups(key, 0, 1);
    expect((await post(`/runs/${key}/cancel`, {})).body).toMatchObject({ state: 'cancelled' });
  });

  it('a run whose agent calls the policy probes the endpoint first, from a worker: raw logprobs or no answer is refused (422, what to start the server with, no run); a right one starts', async () => {
    const raw = await new FakePolicy({ model: 'policy-7b', logprobsMode: 'raw' }).start();
    const good = await new FakePolicy({ model: 'policy-7b' }).start();
    try {
      const runOf = (key: string, endpoint: string) => ({ key, tasks: ['ok'], n: 1, agent: 'openai', policy: { endpoint, model: 'policy-7b' } });
      const rawKey = `raw-${randomBytes(3).toString('hex')}`;
      const refused = await post('/runs', runOf(rawKey, `${raw.url}/v1`));
      expect(refused.status).toBe(422);
      expect(refused.body.error).toMatch(/returns raw logprobs .* Start vLLM with --logprobs-mode processed_logprobs/);
      expect(raw.seen.map((s) => s.body['temperature'])).toEqual(expect.arrayContaining([1, 0.5]));
      expect((await fetch(`${serving.url}/runs/${rawKey}`)).status).toBe(404);
      const unreachable = await post('/runs', runOf(`dead-${randomBytes(3).toString('hex')}`, 'http://127.0.0.1:9/v1'));
      expect(unreachable.status).toBe(422);
      expect(unreachable.body.error).toMatch(/the policy endpoint http:\/\/127\.0\.0\.1:9\/v1\/chat\/completions did not answer/);
      const goodKey = `good-${randomBytes(3).toString('hex')}`;
      const started = await post('/runs', runOf(goodKey, `${good.url}/v1`));
      expect(started.status).toBe(201);
      expect(good.seen.filter((s) => s.body['top_logprobs'] === 5)).toHaveLength(2);
      expect((await post(`/runs/${goodKey}/cancel`, {})).body).toMatchObject({ state: 'cancelled' });
    } finally {
      await raw.stop();
      await good.stop();
    }
  });

  it('/run answers NeMo Gym\'s verify response: scored with its reward, masked with mask_sample and its kind (never a bare 0); the same request is the same episode', async () => {
    const request = (task: string, rollout: number) => ({
      task_name: task, _ng_task_index: 0, _ng_rollout_index: rollout,
      responses_create_params: { input: [{ role: 'user', content: 'x' }], temperature: 1.0, top_p: 1.0 },
    });
    const [scored, masked] = await Promise.all([post('/run', request('ok', 0)), post('/run', request('lost', 0))]);
    expect(scored.status).toBe(200);
    expect(scored.body).toMatchObject({ task_name: 'ok', _ng_task_index: 0, _ng_rollout_index: 0, reward: 1, mask_sample: false, failure_kind: null });
    expect(scored.body.response).toMatchObject({ object: 'response', status: 'completed' });
    expect(scored.body.responses_create_params.input).toEqual([{ role: 'user', content: 'Write ok to out.txt\n', type: 'message' }]);
    expect(masked.body).toMatchObject({ mask_sample: true, failure_kind: 'harbor:seed_failed', reward: 0 });
    const again = await post('/run', request('ok', 0));
    expect(again.body.berth_workflow_id).toBe(scored.body.berth_workflow_id);
    const metrics = await post('/aggregate_metrics', { verify_responses: [scored.body, masked.body] });
    expect(metrics.body.agent_metrics).toMatchObject({ 'mean/reward': 1, num_masked: 1, num_scored: 1 });
    const refused = await post('/run', { task_name: 'ok' });
    expect(refused.status).toBe(422);
  });

  it('/run with an agent that calls the policy: each call\'s message with the engine\'s exact tokens, its function call, and the tool output the next call answered (function_call_output)', async () => {
    const engine = await new FakePolicy({
      model: 'policy-7b',
      script: ({ messages }) => (messages.at(-1)?.['role'] === 'tool' ? { content: 'Wrote it.' } : { content: 'Writing.', toolCalls: [{ name: 'bash', arguments: { command: 'echo ok > /app/out.txt' } }] }),
    }).start();
    const withPolicy = await startServe({
      client: cluster.client, taskQueue: cluster.taskQueue, port: 0, dataset: writeDataset(echoTask('ok')), agent: 'openai',
      gymBatch: `gym-openai-${randomBytes(3).toString('hex')}`, policy: { endpoint: `${engine.url}/v1`, model: 'policy-7b' },
    });
    try {
      const r = await fetch(`${withPolicy.url}/run`, {
        method: 'POST', headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ task_name: 'ok', _ng_task_index: 0, _ng_rollout_index: 0, responses_create_params: { input: [] } }),
      });
      const body = await r.json() as { reward: number; mask_sample: boolean; response: { output: Array<Record<string, unknown>> } };
      expect(body).toMatchObject({ reward: 1, mask_sample: false });
      const output = body.response.output;
      expect(output.map((i) => `${String(i['type'])}:${String(i['role'] ?? '')}`)).toEqual([
        'message:system', 'message:user', 'message:assistant', 'function_call:', 'function_call_output:', 'message:assistant',
      ]);
      expect(output[1]).toMatchObject({ content: 'Write ok to out.txt\n' });
      const [call, result] = [output[3]!, output[4]!];
      expect(call).toMatchObject({ name: 'bash', arguments: JSON.stringify({ command: 'echo ok > /app/out.txt' }) });
      expect(result).toMatchObject({ call_id: call['call_id'], status: 'completed' });
      const asked = engine.seen.filter((c) => c.body['return_token_ids'] === true);
      expect([output[2], output[5]].map((m) => m!['generation_token_ids'])).toEqual(asked.map((c) => c.generationTokenIds));
      expect([output[2], output[5]].map((m) => m!['prompt_token_ids'])).toEqual(asked.map((c) => c.promptTokenIds));
    } finally {
      await withPolicy.close();
      await engine.stop();
    }
  });

  it('the Python client (clients/python, pytest) against this service', async () => {
    const root = join(import.meta.dirname, '..', '..');
    const run = await new Promise<{ code: number; out: string }>((resolve) => {
      execFile('python3', ['-m', 'pytest', '-q', '-p', 'no:cacheprovider', join(root, 'clients', 'python', 'tests')], {
        cwd: join(root, 'clients', 'python'), env: { ...process.env, BERTH_SERVE_URL: serving.url, PYTHONPATH: join(root, 'clients', 'python') }, timeout: 300_000,
      }, (err, stdout, stderr) => resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, out: stdout + stderr }));
    });
    expect(run.out).toMatch(/3 passed/);
    expect(run.code).toBe(0);
    // The cancelled run's episode tears its sandbox down while this file's workers still run (before, the workers
    // stopped first and its container was left behind).
    const docker = new Docker();
    let left: string[] = [];
    await waitUntil(async () => {
      left = (await docker.listContainers({ all: true, filters: { name: ['berth-rollout-py-'] } })).map((c) => c.Names[0] ?? c.Id);
      return left.length === 0;
    }, 120_000, 'no sandbox of the Python client\'s runs').catch((err: Error) => { throw new Error(`${err.message}; still there: ${left.join(', ')}`); });
  }, 450_000);
});
