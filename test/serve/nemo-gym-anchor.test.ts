// The anchor of issue 41: NeMo Gym 0.7.0 from PyPI (in the venv `npm run setup -- nemo-gym` makes on the CPython Berth
// builds) runs its own rollout collection, `ng_collect_rollouts` (nemo_gym/rollout_collection.py), against
// `berth serve`, which NeMo Gym did not start: berth serve answers the head server's `GET /global_config_dict_yaml`
// naming itself as the harbor agent and its environment server. Every task of examples/ is one /run, one durable
// episode of the openai agent whose calls go through the worker's gateway to a fake vLLM policy. The rows NeMo Gym
// writes are checked against the engine (rewards, token ids, logprobs), then NeMo Gym's own pydantic models validate
// each request, verify response, output item and token record (test/serve/nemo_gym_validate.py).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { startTestWorkers, type TestCluster } from '../helpers/temporal.ts';
import { noContainersLeft } from '../helpers/docker.ts';
import { FakePolicy, type ScriptedReply } from '../helpers/fake-policy.ts';
import { startServe, type Serving } from '../../src/serve/server.ts';
import { GYM_AGENT_NAME } from '../../src/serve/gym-config.ts';
import type { ResultRow } from '../../src/workflows/types.ts';

const VENV = join(process.env.BERTH_HOME ?? join(homedir(), '.berth'), 'tools', 'nemo-gym-0.7.0');
const EXAMPLES = join(import.meta.dirname, '..', '..', 'examples');
type Json = Record<string, unknown>;

/** What the policy does for each task of examples/: one bash call that solves it (multiply answered wrong), then done. */
function solve({ messages }: { messages: Json[] }): ScriptedReply {
  if (messages.at(-1)?.['role'] === 'tool') return { content: 'Done.' };
  const task = String(messages.find((m) => m['role'] === 'user')?.['content'] ?? '');
  const sum = /Compute (\d+) ([-+*]) (\d+)/.exec(task);
  let command = 'true';
  if (task.includes('hello.txt')) command = "printf 'Hello, world!\\n' > /app/hello.txt";
  else if (task.includes('greeter')) command = "python3 -c \"import urllib.request; open('/app/greeting.txt','w').write(urllib.request.urlopen('http://greeter:8000/greeting').read().decode())\"";
  else if (sum) {
    const [a, op, b] = [Number(sum[1]), sum[2], Number(sum[3])];
    // A wrong answer on purpose: a scored 0, which is not a masked sample.
    const answer = op === '+' ? a + b : op === '-' ? a - b : a * b + 1;
    command = `echo ${answer} > /app/answer.md`;
  }
  return { content: 'On it.', toolCalls: [{ name: 'bash', arguments: { command } }] };
}

const run = (file: string, args: string[], cwd: string, timeout: number): Promise<{ code: number; out: string; err: string }> =>
  new Promise((resolve) => {
    execFile(file, args, { cwd, timeout, maxBuffer: 64 << 20, env: { ...process.env, PYTHONUNBUFFERED: '1' } }, (error, stdout, stderr) =>
      resolve({ code: error ? Number((error as { code?: number }).code ?? 1) : 0, out: stdout, err: stderr }));
  });

describe('NeMo Gym 0.7.0\'s own rollout collection against berth serve (real Temporal, real Docker, fake vLLM policy)', () => {
  let cluster: TestCluster;
  let engine: FakePolicy;
  let serving: Serving;
  const batch = `gym-anchor-${randomBytes(3).toString('hex')}`;

  beforeAll(async () => {
    if (!existsSync(join(VENV, '.complete'))) throw new Error(`NeMo Gym 0.7.0 is not installed in ${VENV}: run \`npm run setup -- nemo-gym\` (scripts/setup-nemo-gym.sh)`);
    engine = await new FakePolicy({ model: 'policy-7b', script: solve }).start();
    cluster = await startTestWorkers('nemo-gym-anchor');
    serving = await startServe({
      client: cluster.client, taskQueue: cluster.taskQueue, port: 0, dataset: EXAMPLES, agent: 'openai', gymBatch: batch,
      policy: { endpoint: `${engine.url}/v1`, model: 'policy-7b' },
    });
  });
  afterAll(async () => {
    await serving?.close();
    await cluster?.stop();
    await engine?.stop();
  });

  it('ng_collect_rollouts collects a row per task of examples/: rewards, exact token ids and logprobs, tool calls and their outputs; NeMo Gym\'s models accept every answer and record', async () => {
    const work = mkdtempSync(join(tmpdir(), 'berth-nemo-gym-'));
    const tasks = ['hello', 'add', 'subtract', 'multiply', 'compose-hello'];
    writeFileSync(join(work, 'input.jsonl'), tasks.map((t) => JSON.stringify({ task_name: t, responses_create_params: { input: [] } })).join('\n') + '\n');
    const { port } = new URL(serving.url);
    const collected = await run(join(VENV, 'bin', 'ng_collect_rollouts'), [
      '+head_server.host=127.0.0.1', `+head_server.port=${port}`, `+agent_name=${GYM_AGENT_NAME}`,
      '+input_jsonl_fpath=input.jsonl', '+output_jsonl_fpath=out/rollouts.jsonl', '+num_repeats=1',
    ], work, 900_000);
    expect(collected.code, `${collected.out}\n${collected.err}`).toBe(0);

    const rows = readFileSync(join(work, 'out', 'rollouts.jsonl'), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Json & { response: { output: Json[] } });
    const byTask = Object.fromEntries(rows.map((r) => [r['task_name'] as string, r]));
    expect(Object.keys(byTask).sort()).toEqual([...tasks].sort());
    // NeMo Gym's collector stamps its own fields; the rewards are the verifiers' (multiply was answered wrong: scored 0, not masked).
    expect(Object.fromEntries(rows.map((r) => [r['task_name'], [r['reward'], r['mask_sample']]]))).toEqual({
      hello: [1, false], add: [1, false], subtract: [1, false], multiply: [0, false], 'compose-hello': [1, false],
    });
    for (const r of rows) expect(r).toMatchObject({ _ng_environment_server: 'berth_harbor_environment', agent_ref: { name: GYM_AGENT_NAME }, failure_kind: null });

    // Each row: the instruction fed in, then for each call its assistant message with the engine's exact tokens, its
    // function call, and the tool output the next call answered.
    const calls = engine.seen.filter((s) => s.body['return_token_ids'] === true && s.body['max_tokens'] !== 1);
    expect(calls).toHaveLength(2 * tasks.length);
    const records: string[] = [];
    for (const task of tasks) {
      const output = byTask[task]!.response.output;
      // The first call's prompt (the openai agent's system message and the task's instruction) as input messages,
      // as NeMo Gym's harbor agent lists a trajectory's system and user steps.
      expect(output.map((i) => `${String(i['type'])}:${String(i['role'] ?? '')}`)).toEqual([
        'message:system', 'message:user', 'message:assistant', 'function_call:', 'function_call_output:', 'message:assistant',
      ]);
      const generated = output.filter((i) => 'generation_token_ids' in i);
      expect(generated).toHaveLength(2);
      for (const g of generated) {
        const served = calls.find((c) => JSON.stringify(c.promptTokenIds) === JSON.stringify(g['prompt_token_ids']));
        expect(served, `a prompt of ${task} the engine was sent`).toBeDefined();
        expect(g['generation_token_ids']).toEqual(served!.generationTokenIds);
        expect(g['generation_log_probs']).toEqual(served!.logprobs);
      }
      const call = output.find((i) => i['type'] === 'function_call')!;
      const answered = output.find((i) => i['type'] === 'function_call_output')!;
      expect(call).toMatchObject({ name: 'bash', status: 'completed' });
      expect(answered['call_id']).toBe(call['call_id']);
      // The second prompt holds the first call's tokens then the tool's output: the next call extends the first exactly.
      const [first, second] = generated.map((g) => [...(g['prompt_token_ids'] as number[]), ...(g['generation_token_ids'] as number[])]);
      expect(second!.slice(0, first!.length)).toEqual(first);

      const row = await cluster.client.workflow.getHandle(String(byTask[task]!['berth_workflow_id'])).result() as ResultRow;
      expect(row.training).toMatchObject({ tokens: 'token-records.jsonl', calls: 2, exact: true });
      records.push(join(row.logs_dir!, row.training!.tokens!));
    }

    // NeMo Gym's own models: HarborRunRequest for what it sent, HarborVerifyResponse for each answer, the training
    // message, function call and function call output models item by item, TokenEntry for each record (and its digest
    // recomputed with NeMo Gym's compute_digest), AggregateMetrics for what /aggregate_metrics answered.
    const validated = await run(join(VENV, 'bin', 'python'), [join(import.meta.dirname, 'nemo_gym_validate.py'), join(work, 'out'), ...records], work, 300_000);
    expect(validated.code, `${validated.out}\n${validated.err}`).toBe(0);
    const summary = JSON.parse(validated.out.trim().split('\n').at(-1)!) as Json;
    expect(summary).toMatchObject({
      requests: 5, responses: 5, training_messages: 10, function_calls: 5, function_call_outputs: 5, records: 10, digests_match: 10, aggregate_metrics: 1, errors: [],
    });
    const metrics = JSON.parse(readFileSync(join(work, 'out', 'rollouts_aggregate_metrics.json'), 'utf8')) as Array<{ agent_metrics: Json }>;
    expect(metrics[0]!.agent_metrics).toMatchObject({ 'mean/reward': 0.8, num_scored: 5, num_masked: 0 });
    await noContainersLeft(`berth.batch=${batch}`);
  }, 1_200_000);
});
