// Installed agents end to end (issue 16): each agent installed for real into a layer over examples/hello's image,
// then run through a real worker, a real engine and real Temporal against a fake model server speaking its
// vendor's wire protocol. The fake is the only stand-in: the paid API. Layers are content-addressed, so a run
// builds each once and later runs on the same machine reuse them.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DockerSandboxProvider } from '../../src/sandbox/index.ts';
import { ModelProbeFailed } from '../../src/client/probe.ts';
import { batchWorkflowId } from '../../src/client/episodes.ts';
import { validateAtif } from '../../src/trajectory/atif.ts';
import { INSTALLED_AGENTS, imageId, layerExists, layerTag } from '../../src/agents/index.ts';
import type { AgentName } from '../../src/workflows/types.ts';
import { berth } from '../helpers/cli.ts';
import { reportedUsage } from './fake-vendors.ts';
import { activityTypes as historyActivities, docker, helloDataset, runHello as runDataset, trajectoryOf, useInstalledWorld, watchSandbox as watch } from './installed-run.ts';
import { SEEDING_ACTIVITIES } from '../helpers/warm-pool.ts';

const hello = helloDataset();
const REAL_KEY = 'sk-berth-test-REAL-7f3c9e1a5b2d8c4f';
const provider = new DockerSandboxProvider(docker);
const INSTALL_TIMEOUT = 900_000;

const world = useInstalledWorld('installed', REAL_KEY);

const activityTypes = (workflowId: string) => historyActivities(world.cluster, workflowId);
const runHello = (agent: AgentName, model: string, extra: Parameters<typeof runDataset>[4] = {}) => runDataset(world.cluster, hello, agent, model, extra);
const watchSandbox = (batchIdOf: () => string) => watch(world.fake, REAL_KEY, batchIdOf);

describe.each([
  { agent: 'claude-code' as const, model: 'anthropic/claude-sonnet-4-5', path: '/v1/messages', prepare: false },
  { agent: 'codex' as const, model: 'openai/gpt-5-codex', path: '/v1/responses', prepare: true },
  { agent: 'mini-swe-agent' as const, model: 'openai/gpt-4.1-mini', path: '/v1/chat/completions', prepare: false },
])('$agent installed into a layer, on examples/hello', ({ agent, model, path, prepare }) => {
  it('scores 1 with a valid ATIF trajectory, the usage the model reported, and no key in the sandbox', async () => {
    const tag = layerTag(await imageId(provider, 'berth-base:bookworm'), INSTALLED_AGENTS[agent]);
    const hadLayer = await layerExists(provider, tag);
    const from = world.fake.reported.length;
    let batchId = '';
    const batchIdFor = `installed-${agent}-${Date.now().toString(36)}`;
    const watch = watchSandbox(() => batchId || batchIdFor);
    const { rows } = await runHello(agent, model, { batchId: batchIdFor, prepare }).finally(() => { world.fake.beforeFinish = undefined; });
    batchId = batchIdFor;
    const row = rows[0]!;
    if (process.env.BERTH_TEST_TIMINGS) console.log(agent, JSON.stringify(row.timings));
    expect(row, row.failure_reason ?? '').toMatchObject({ reward: 1, mask_sample: false, failure_kind: null });
    expect(validateAtif(trajectoryOf(row))).toEqual({ ok: true });

    const calls = world.fake.reported.slice(from).filter((r) => !r.probe);
    expect(calls.length).toBeGreaterThanOrEqual(2);
    expect(calls.every((c) => c.path === path)).toBe(true);
    expect(row.usage).toMatchObject(reportedUsage(world.fake, from));
    expect(row.turns[0]!.usage).toEqual(row.usage);

    const seen = await watch.result;
    expect(seen.key).toEqual({ files: [], environ: [] });
    expect(seen.token.environ.length).toBeGreaterThan(0);
    world.fake.beforeFinish = undefined;
    // A host without the layer installs it once: in the episode (an activity of its own), or in the batch's prepare.
    expect(await layerExists(provider, tag)).toBe(true);
    if (!hadLayer && !prepare) expect(await activityTypes(row.workflow_id)).toContain('installAgentLayer');
    if (hadLayer || prepare) expect(await activityTypes(row.workflow_id)).not.toContain('installAgentLayer');
    // Nor in the episode's history, its row, or its logs on the host.
    const history = await world.cluster.client.workflow.getHandle(row.workflow_id).fetchHistory();
    expect(JSON.stringify(history, (_k, v: unknown) => (v instanceof Uint8Array ? Buffer.from(v).toString('utf8') : v))).not.toContain(REAL_KEY);
    expect(JSON.stringify(row)).not.toContain(REAL_KEY);
    const logs = spawnSync('grep', ['-rlF', REAL_KEY, row.logs_dir!], { encoding: 'utf8' });
    expect(logs.stdout).toBe('');
    // The fake saw the real key (put in by the gateway), and no token of Berth's reached it.
    expect([...world.fake.keysSeen].every((k) => k === REAL_KEY)).toBe(true);
  }, INSTALL_TIMEOUT);
});

describe('the layer is reused, rate limits are retried, limits and bad keys stop', () => {
  it('a second episode on this host starts from the layer: no install activity in its history', async () => {
    const { rows } = await runHello('mini-swe-agent', 'openai/gpt-4.1-mini', { prepare: false });
    expect(rows[0]).toMatchObject({ reward: 1 });
    const types = await activityTypes(rows[0]!.workflow_id);
    // A single-step episode seeds in seedThenAgentTurn (docs/performance-notes.md, One activity for the seed and the agent).
    expect(types.filter((t) => SEEDING_ACTIVITIES.includes(t))).toHaveLength(1);
    expect(types).not.toContain('installAgentLayer');
  }, INSTALL_TIMEOUT);

  it('a 429 on the first call is retried inside the turn and the episode scores', async () => {
    const refusedBefore = world.fake.refused.length;
    world.fake.rateLimitNext();
    const { rows } = await runHello('mini-swe-agent', 'openai/gpt-4.1-mini');
    expect(rows[0]).toMatchObject({ reward: 1, mask_sample: false });
    expect(world.fake.refused.slice(refusedBefore)).toEqual([{ path: '/v1/chat/completions', status: 429 }]);
    const calls = readFileSync(join(rows[0]!.logs_dir!, 'turn-1', 'agent', 'model-calls.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { attempts: number });
    expect(calls[0]!.attempts).toBe(2);
  }, INSTALL_TIMEOUT);

  it('--max-tokens ends the turn with agent:max_tokens (no further model call is let through)', async () => {
    const from = world.fake.reported.length;
    const { rows } = await runHello('mini-swe-agent', 'openai/gpt-4.1-mini', { limits: { maxTokens: 30 } });
    expect(rows[0]).toMatchObject({ failure_kind: 'agent:max_tokens', mask_sample: false });
    expect(rows[0]!.failure_reason).toContain('--max-tokens');
    expect(world.fake.reported.slice(from).filter((r) => !r.probe)).toHaveLength(1);
    expect(rows[0]!.usage).toMatchObject({ calls: 1, promptTokens: 50, completionTokens: 10 });
  }, INSTALL_TIMEOUT);

  it('a key the provider refuses (401) stops the batch before any sandbox starts', async () => {
    process.env.OPENAI_API_KEY = 'sk-wrong';
    const batchId = `installed-401-${Date.now().toString(36)}`;
    try {
      const err = await runHello('codex', 'openai/gpt-5-codex', { batchId }).then(() => null, (e: unknown) => e);
      expect(err).toBeInstanceOf(ModelProbeFailed);
      expect((err as ModelProbeFailed).kind).toBe('agent:bad_credentials');
      expect((err as Error).message).toMatch(/HTTP 401.*OPENAI_API_KEY/s);
      expect((err as Error).message).not.toContain('sk-wrong');
    } finally {
      process.env.OPENAI_API_KEY = REAL_KEY;
    }
    expect(await docker.listContainers({ all: true, filters: { label: [`berth.batch=${batchId}`] } })).toEqual([]);
    const batch = await world.cluster.client.workflow.getHandle(`${batchWorkflowId(batchId)}`).describe().then(() => 'started', () => 'never started');
    expect(batch).toBe('never started');
  }, 120_000);
});

describe('berth agents and berth prepare --agent', () => {
  it('berth agents lists each agent\'s pinned version and the layers this host\'s engine holds', async () => {
    const res = await berth(['agents', '--json']);
    expect(res.code, res.stderr).toBe(0);
    const out = JSON.parse(res.stdout) as { agents: Array<{ name: string; version: string; layers: Array<{ tag: string }>; options: Array<{ name: string; default: string | null }> }> };
    expect(out.agents.map((a) => [a.name, a.version])).toEqual([
      ['claude-code', '2.1.328'], ['codex', '0.169.0'], ['mini-swe-agent', '2.4.6'],
      ['opencode', '1.18.33'], ['gemini-cli', '0.61.0'], ['qwen-code', '0.24.4'], ['cline', '3.0.65'], ['aider', '0.86.2'],
      ['openhands', '1.16.0'],
    ]);
    const options = Object.fromEntries(out.agents.map((a) => [a.name, a.options]));
    expect(options['gemini-cli']).toContainEqual(expect.objectContaining({ name: 'disable_web_search', default: 'false' }));
    expect(options['mini-swe-agent']).toContainEqual(expect.objectContaining({ name: 'cost_limit', default: '0' }));
    const engine = (await docker.listImages({ filters: { label: ['berth.agent-layer=1'] } })).flatMap((i) => i.RepoTags ?? []);
    // The first three; installed-more.test.ts builds the others.
    for (const a of out.agents.slice(0, 3)) {
      expect(a.layers.length).toBeGreaterThan(0);
      for (const l of a.layers) expect(engine).toContain(l.tag);
    }
  });

  it('berth prepare --agent refuses a name that is not an installed agent, naming the choices', async () => {
    const res = await berth(['prepare', hello, '--agent', 'goose']);
    expect(res.code).not.toBe(0);
    expect(res.stderr).toContain('--agent goose: not an installed agent; choose one of claude-code, codex, mini-swe-agent, opencode, gemini-cli, qwen-code, cline, aider, openhands');
  });
});
