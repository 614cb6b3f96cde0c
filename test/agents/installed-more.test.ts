// The installed agents of issue 26 end to end, as test/agents/installed.test.ts does the first three: each
// installed for real into a layer over examples/hello's image (packages fetched on the host from npm or PyPI),
// then run through a real worker, a real engine and real Temporal against the fake model server speaking the
// agent's wire protocol, reached only through the gateway. A second episode starts from the layer. opencode and
// cline also run on their Anthropic route. An --agent-arg an agent does not take stops the batch before it starts, and
// a task whose image lacks the agent's runtime is refused alone while the batch's other task runs.
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DockerSandboxProvider } from '../../src/sandbox/index.ts';
import { ModelProbeFailed } from '../../src/client/probe.ts';
import { batchWorkflowId } from '../../src/client/episodes.ts';
import { validateAtif } from '../../src/trajectory/atif.ts';
import { INSTALLED_AGENTS, imageId, layerExists, layerTag } from '../../src/agents/index.ts';
import type { AgentName } from '../../src/workflows/types.ts';
import { buildTestImage, NO_LIBSTDCXX, removeTestImage } from '../helpers/docker.ts';
import { reportedUsage, WRITE_HELLO } from './fake-vendors.ts';
import { activityTypes, docker, helloDataset, runHello, trajectoryOf, useInstalledWorld, watchSandbox } from './installed-run.ts';

const hello = helloDataset();
const REAL_KEY = 'sk-berth-test-REAL-26e1d0c7a9f34b58';
const provider = new DockerSandboxProvider(docker);
const INSTALL_TIMEOUT = 1_500_000;

const world = useInstalledWorld('installed-more', REAL_KEY);

interface ToolCall { function_name: string; arguments: Record<string, unknown> }

interface Case {
  agent: AgentName;
  model: string;
  /** Every call the agent made reached the fake at a path starting so. */
  path: string;
  minCalls?: number;
  args?: Record<string, string>;
  /** A tool call the transcript holds (default: the shell command that writes hello.txt). */
  call?: Partial<ToolCall>;
}

const CASES: Case[] = [
  { agent: 'opencode', model: 'openai/gpt-4.1-mini', path: '/v1/chat/completions' },
  { agent: 'gemini-cli', model: 'google/gemini-2.5-pro', path: '/v1beta/models/gemini-2.5-pro:' },
  { agent: 'qwen-code', model: 'openai/qwen3-coder-plus', path: '/v1/chat/completions' },
  { agent: 'cline', model: 'openai/gpt-4.1-mini', path: '/v1/chat/completions' },
  // Aider edits from the answer's text (a whole-file listing), in one call: its applied edit is the tool call.
  // edit_format=whole (an --agent-arg reaching it): the fake answers with a whole-file listing.
  { agent: 'aider', model: 'openai/gpt-4.1-mini', path: '/v1/chat/completions', minCalls: 1, args: { edit_format: 'whole' }, call: { function_name: 'apply_edit', arguments: { path: 'hello.txt' } } },
];

/** The agents that speak Anthropic Messages too (docs/agents.md: opencode's @ai-sdk/anthropic provider, cline's anthropic). */
const ANTHROPIC_CASES: Case[] = [
  { agent: 'opencode', model: 'anthropic/claude-sonnet-4-5', path: '/v1/messages' },
  { agent: 'cline', model: 'anthropic/claude-sonnet-4-5', path: '/v1/messages' },
];

/** examples/hello with the agent through the gateway: reward 1, usage as reported, the tool call in ATIF, no key anywhere. */
async function scoresThroughGateway({ agent, model, path, minCalls = 2, args = {}, call }: Case): Promise<void> {
  const { fake, cluster } = world;
  const tag = layerTag(await imageId(provider, 'berth-base:bookworm'), INSTALLED_AGENTS[agent as keyof typeof INSTALLED_AGENTS]);
  const from = fake.reported.length;
  const batchId = `installed-${agent}-${Date.now().toString(36)}`;
  const watch = watchSandbox(fake, REAL_KEY, () => batchId);
  const { rows } = await runHello(cluster, hello, agent, model, { batchId, prepare: true, agentArgs: args }).finally(() => { fake.beforeFinish = undefined; });
  const row = rows[0]!;
  if (process.env.BERTH_TEST_TIMINGS) console.log(agent, model, JSON.stringify(row.timings));
  expect(row, row.failure_reason ?? '').toMatchObject({ reward: 1, mask_sample: false, failure_kind: null });

  const trajectory = trajectoryOf(row) as { steps: Array<{ tool_calls?: ToolCall[] }> };
  expect(validateAtif(trajectory)).toEqual({ ok: true });
  const calls = trajectory.steps.flatMap((s) => s.tool_calls ?? []);
  if (call) expect(calls).toContainEqual(expect.objectContaining(call));
  else expect(calls.some((x) => JSON.stringify(x.arguments).includes(JSON.stringify(WRITE_HELLO).slice(1, -1)))).toBe(true);

  const answered = fake.reported.slice(from).filter((r) => !r.probe);
  expect(answered.length).toBeGreaterThanOrEqual(minCalls);
  expect(answered.map((c) => c.path).filter((p) => !p.startsWith(path))).toEqual([]);
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
}

describe.each(CASES)('$agent installed into a layer, on examples/hello', (c) => {
  it('scores 1 through the gateway: the usage the model reported, its tool calls in the ATIF transcript, and no key in the sandbox', () => scoresThroughGateway(c), INSTALL_TIMEOUT);

  it('a second episode starts from the layer: no install activity in its history', async () => {
    const { rows } = await runHello(world.cluster, hello, c.agent, c.model, { prepare: false, agentArgs: c.args ?? {} });
    if (process.env.BERTH_TEST_TIMINGS) console.log(c.agent, 'reused', JSON.stringify(rows[0]!.timings));
    expect(rows[0], rows[0]!.failure_reason ?? '').toMatchObject({ reward: 1 });
    const types = await activityTypes(world.cluster, rows[0]!.workflow_id);
    expect(types).toContain('seed');
    expect(types).not.toContain('installAgentLayer');
  }, INSTALL_TIMEOUT);
});

describe.each(ANTHROPIC_CASES)('$agent on its Anthropic route ($model)', (c) => {
  it('scores 1 against Anthropic Messages through the gateway, with the usage the server reported (input with its cache reads and writes)', () => scoresThroughGateway(c), INSTALL_TIMEOUT);
});

describe('an --agent-arg the agent does not take is refused before the batch starts', () => {
  it.each([
    ['opencode', 'openai/gpt-4.1-mini', { turbo: '1' }, '--agent-arg turbo: opencode has no such option; it takes variant, agent, opencode_config (see berth agents)'],
    ['cline', 'openai/gpt-4.1-mini', { thinking: 'huge' }, '--agent-arg thinking=huge: cline takes one of none, low, medium, high, xhigh'],
    ['gemini-cli', 'google/gemini-2.5-pro', { settings: '[1]' }, '--agent-arg settings: gemini-cli wants a JSON object (e.g. settings=\'{"key": "value"}\'), got [1]'],
  ] as const)('%s %j: named with what it takes, before any model call, sandbox or batch', async (agent, model, agentArgs, message) => {
    const from = world.fake.reported.length;
    const batchId = `installed-bad-arg-${agent}-${Date.now().toString(36)}`;
    const err = await runHello(world.cluster, hello, agent, model, { batchId, agentArgs }).then(() => null, (e: unknown) => e);
    expect(err).toBeInstanceOf(ModelProbeFailed);
    expect((err as ModelProbeFailed).kind).toBe('agent:bad_args');
    expect((err as Error).message).toBe(`the batch was not started: ${message}`);
    // Refused before the probe's own model call.
    expect(world.fake.reported.length).toBe(from);
    expect(await docker.listContainers({ all: true, filters: { label: [`berth.batch=${batchId}`] } })).toEqual([]);
    const batch = await world.cluster.client.workflow.getHandle(batchWorkflowId(batchId)).describe().then(() => 'started', () => 'never started');
    expect(batch).toBe('never started');
  }, 120_000);
});

// docs/agents.md § Layers: "A missing runtime is found at prepare, before anything is fetched"; only that task's
// episodes are masked, the batch's other tasks go on. (That nothing is fetched: installed-pure.test.ts.)
describe('a task whose image lacks the runtime the agent needs, beside one that has it', () => {
  const image = `berth-test-no-libstdcxx-${randomBytes(4).toString('hex')}:1`;
  const NEEDS = /gemini-cli 0\.61\.0 needs glibc >= 2\.28 and libstdc\+\+6 in the task's image, which has no libstdc\+\+\.so\.6: add them to the task's image \(Debian\/Ubuntu: libstdc\+\+6\) or pick another agent/;
  let mixed = '';
  beforeAll(() => {
    buildTestImage(image, NO_LIBSTDCXX);
    mixed = helloDataset();
    cpSync(join(mixed, 'hello'), join(mixed, 'bare'), { recursive: true });
    const toml = join(mixed, 'bare', 'task.toml');
    writeFileSync(toml, readFileSync(toml, 'utf8').replace('docker_image = "berth-base:bookworm"', `docker_image = "${image}"`));
  }, 120_000);
  afterAll(() => removeTestImage(image));

  it('at prepare: that task is skipped, naming the agent and what its image lacks; the other task scores 1', async () => {
    const { rows, skipped } = await runHello(world.cluster, mixed, 'gemini-cli', 'google/gemini-2.5-pro', { prepare: true });
    expect(skipped).toEqual([expect.objectContaining({ task_id: 'bare', stage: 'prepare', reason: expect.stringMatching(NEEDS) as unknown })]);
    expect(rows.map((r) => [r.task_id, r.reward])).toEqual([['hello', 1]]);
  }, INSTALL_TIMEOUT);

  it('without prepare: its episode\'s install is masked as agent:install_failed with the same message; the other task scores 1', async () => {
    const { rows } = await runHello(world.cluster, mixed, 'gemini-cli', 'google/gemini-2.5-pro', { prepare: false });
    const byTask = Object.fromEntries(rows.map((r) => [r.task_id, r]));
    expect(byTask['bare']).toMatchObject({ failure_kind: 'agent:install_failed', mask_sample: true, failure_reason: expect.stringMatching(NEEDS) as unknown });
    expect(byTask['hello'], byTask['hello']?.failure_reason ?? '').toMatchObject({ reward: 1, failure_kind: null });
  }, INSTALL_TIMEOUT);
});
