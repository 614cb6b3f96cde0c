// The installed agents of issue 26 end to end, as test/agents/installed.test.ts does the first three: each
// installed for real into a layer over examples/hello's image (packages fetched on the host from npm or PyPI),
// then run through a real worker, a real engine and real Temporal against the fake model server speaking the
// agent's wire protocol, reached only through the gateway. A second episode starts from the layer. opencode and
// cline also run on their Anthropic route. An --agent-arg an agent does not take stops the batch before it starts, and
// a task whose image lacks the agent's runtime is refused alone while the batch's other task runs.
import { randomBytes } from 'node:crypto';
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ModelProbeFailed } from '../../src/client/probe.ts';
import { batchWorkflowId } from '../../src/client/episodes.ts';
import { buildTestImage, NO_LIBSTDCXX, removeTestImage } from '../helpers/docker.ts';
import { docker, expectLayerReused, expectScoresThroughGateway, helloDataset, runHello, useInstalledWorld, type GatewayCase } from './installed-run.ts';

const hello = helloDataset();
const REAL_KEY = 'sk-berth-test-REAL-26e1d0c7a9f34b58';
const INSTALL_TIMEOUT = 1_500_000;

const world = useInstalledWorld('installed-more', REAL_KEY);

const CASES: GatewayCase[] = [
  { agent: 'opencode', model: 'openai/gpt-4.1-mini', path: '/v1/chat/completions' },
  { agent: 'gemini-cli', model: 'google/gemini-2.5-pro', path: '/v1beta/models/gemini-2.5-pro:' },
  { agent: 'qwen-code', model: 'openai/qwen3-coder-plus', path: '/v1/chat/completions' },
  { agent: 'cline', model: 'openai/gpt-4.1-mini', path: '/v1/chat/completions' },
  // Aider edits from the answer's text (a whole-file listing), in one call: its applied edit is the tool call.
  // edit_format=whole (an --agent-arg reaching it): the fake answers with a whole-file listing.
  { agent: 'aider', model: 'openai/gpt-4.1-mini', path: '/v1/chat/completions', minCalls: 1, args: { edit_format: 'whole' }, call: { function_name: 'apply_edit', arguments: { path: 'hello.txt' } } },
];

/** The agents that speak Anthropic Messages too (docs/agents.md: opencode's @ai-sdk/anthropic provider, cline's anthropic). */
const ANTHROPIC_CASES: GatewayCase[] = [
  { agent: 'opencode', model: 'anthropic/claude-sonnet-4-5', path: '/v1/messages' },
  { agent: 'cline', model: 'anthropic/claude-sonnet-4-5', path: '/v1/messages' },
];

describe.each(CASES)('$agent installed into a layer, on examples/hello', (c) => {
  it('scores 1 through the gateway: the usage the model reported, its tool calls in the ATIF transcript, and no key in the sandbox', () => expectScoresThroughGateway(world, hello, REAL_KEY, c), INSTALL_TIMEOUT);

  it('a second episode starts from the layer: no install activity in its history', () => expectLayerReused(world, hello, c.agent, c.model, c.args), INSTALL_TIMEOUT);
});

describe.each(ANTHROPIC_CASES)('$agent on its Anthropic route ($model)', (c) => {
  it('scores 1 against Anthropic Messages through the gateway, with the usage the server reported (input with its cache reads and writes)', () => expectScoresThroughGateway(world, hello, REAL_KEY, c), INSTALL_TIMEOUT);
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
