// The installed agents of issue 26 end to end, as test/agents/installed.test.ts does the first three: each
// installed for real into a layer over examples/hello's image (packages fetched on the host from npm or PyPI),
// then run through a real worker, a real engine and real Temporal against the fake model server speaking the
// agent's wire protocol, reached only through the gateway. A second episode starts from the layer.
import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DockerSandboxProvider } from '../../src/sandbox/index.ts';
import { validateAtif } from '../../src/trajectory/atif.ts';
import { INSTALLED_AGENTS, imageId, layerExists, layerTag } from '../../src/agents/index.ts';
import type { AgentName } from '../../src/workflows/types.ts';
import { startTestWorkers, type TestCluster } from '../helpers/temporal.ts';
import { reportedUsage, startFakeVendors, WRITE_HELLO, type FakeVendors } from './fake-vendors.ts';
import { activityTypes, docker, helloDataset, runHello, trajectoryOf, watchSandbox } from './installed-run.ts';

const hello = helloDataset();
const REAL_KEY = 'sk-berth-test-REAL-26e1d0c7a9f34b58';
const provider = new DockerSandboxProvider(docker);
const INSTALL_TIMEOUT = 1_500_000;

let cluster: TestCluster;
let fake: FakeVendors;

beforeAll(async () => {
  fake = await startFakeVendors(REAL_KEY);
  Object.assign(process.env, {
    ANTHROPIC_API_KEY: REAL_KEY, ANTHROPIC_BASE_URL: fake.url, OPENAI_API_KEY: REAL_KEY, OPENAI_BASE_URL: `${fake.url}/v1`,
    GEMINI_API_KEY: REAL_KEY, GOOGLE_GEMINI_BASE_URL: fake.url, BERTH_GATEWAY_RETRY_BASE_MS: '50',
  });
  cluster = await startTestWorkers('installed-more');
}, 120_000);
afterAll(async () => {
  await cluster?.stop();
  await fake?.close();
});

interface ToolCall { function_name: string; arguments: Record<string, unknown> }

const CASES = [
  { agent: 'opencode' as const, model: 'openai/gpt-4.1-mini', path: '/v1/chat/completions' },
  { agent: 'gemini-cli' as const, model: 'google/gemini-2.5-pro', path: '/v1beta/models/gemini-2.5-pro:' },
  { agent: 'qwen-code' as const, model: 'openai/qwen3-coder-plus', path: '/v1/chat/completions' },
  { agent: 'cline' as const, model: 'openai/gpt-4.1-mini', path: '/v1/chat/completions' },
  // Aider edits from the answer's text (a whole-file listing), in one call: its applied edit is the tool call.
  // edit_format=whole (an --agent-arg reaching it): the fake answers with a whole-file listing.
  { agent: 'aider' as const, model: 'openai/gpt-4.1-mini', path: '/v1/chat/completions', minCalls: 1, args: { edit_format: 'whole' }, call: { function_name: 'apply_edit', arguments: { path: 'hello.txt' } } },
];

describe.each(CASES)('$agent installed into a layer, on examples/hello', ({ agent, model, path, ...c }) => {
  const minCalls = ('minCalls' in c ? c.minCalls : undefined) ?? 2;
  const expected = 'call' in c ? c.call : null;
  const agentArgs = 'args' in c ? c.args : {};
  const model_ = model;
  it('scores 1 through the gateway: the usage the model reported, its tool calls in the ATIF transcript, and no key in the sandbox', async () => {
    const tag = layerTag(await imageId(provider, 'berth-base:bookworm'), INSTALLED_AGENTS[agent]);
    const from = fake.reported.length;
    const batchId = `installed-${agent}-${Date.now().toString(36)}`;
    const watch = watchSandbox(fake, REAL_KEY, () => batchId);
    const { rows } = await runHello(cluster, hello, agent as AgentName, model_, { batchId, prepare: true, agentArgs }).finally(() => { fake.beforeFinish = undefined; });
    const row = rows[0]!;
    if (process.env.BERTH_TEST_TIMINGS) console.log(agent, JSON.stringify(row.timings));
    expect(row, row.failure_reason ?? '').toMatchObject({ reward: 1, mask_sample: false, failure_kind: null });

    const trajectory = trajectoryOf(row) as { steps: Array<{ tool_calls?: ToolCall[] }> };
    expect(validateAtif(trajectory)).toEqual({ ok: true });
    const calls = trajectory.steps.flatMap((s) => s.tool_calls ?? []);
    if (expected) expect(calls).toContainEqual(expect.objectContaining(expected));
    else expect(calls.some((x) => JSON.stringify(x.arguments).includes(JSON.stringify(WRITE_HELLO).slice(1, -1)))).toBe(true);

    const answered = fake.reported.slice(from).filter((r) => !r.probe);
    expect(answered.length).toBeGreaterThanOrEqual(minCalls);
    expect(answered.every((c) => c.path.startsWith(path))).toBe(true);
    expect(row.usage).toMatchObject(reportedUsage(fake, from));

    const seen = await watch.result;
    expect(seen.key).toEqual({ files: [], environ: [] });
    expect(seen.token.environ.length).toBeGreaterThan(0);
    expect(await layerExists(provider, tag)).toBe(true);
    const history = await cluster.client.workflow.getHandle(row.workflow_id).fetchHistory();
    expect(JSON.stringify(history, (_k, v: unknown) => (v instanceof Uint8Array ? Buffer.from(v).toString('utf8') : v))).not.toContain(REAL_KEY);
    expect(JSON.stringify(row)).not.toContain(REAL_KEY);
    expect(spawnSync('grep', ['-rlF', REAL_KEY, row.logs_dir!], { encoding: 'utf8' }).stdout).toBe('');
    expect([...fake.keysSeen].every((k) => k === REAL_KEY)).toBe(true);
  }, INSTALL_TIMEOUT);

  it('a second episode starts from the layer: no install activity in its history', async () => {
    const { rows } = await runHello(cluster, hello, agent as AgentName, model_, { prepare: false, agentArgs });
    if (process.env.BERTH_TEST_TIMINGS) console.log(agent, 'reused', JSON.stringify(rows[0]!.timings));
    expect(rows[0], rows[0]!.failure_reason ?? '').toMatchObject({ reward: 1 });
    const types = await activityTypes(cluster, rows[0]!.workflow_id);
    expect(types).toContain('seed');
    expect(types).not.toContain('installAgentLayer');
  }, INSTALL_TIMEOUT);
});
