// The openhands installed agent end to end (issue 26), as test/agents/installed-more.test.ts does the others: its
// layer over examples/hello's image brings the CPython scripts/build-cpython.sh builds on this host (Python 3.13;
// the image has 3.11) and the CLI's wheels fetched on the host, then a real worker, engine and Temporal run it
// against the fake model server (Chat Completions), reached only through the gateway. A second episode starts
// from the layer. The first run on a host builds CPython (minutes); later ones reuse BERTH_HOME/tools.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DockerSandboxProvider } from '../../src/sandbox/index.ts';
import { validateAtif } from '../../src/trajectory/atif.ts';
import { AgentInstallFailed, ensureLayer, INSTALLED_AGENTS, imageId, layerExists, layerTag } from '../../src/agents/index.ts';
import { BUSYBOX_IMAGE, ensureShelllessImages } from '../compose/shellless-images.ts';
import { startTestWorkers, type TestCluster } from '../helpers/temporal.ts';
import { reportedUsage, startFakeVendors, WRITE_HELLO, type FakeVendors } from './fake-vendors.ts';
import { activityTypes, docker, helloDataset, runHello, trajectoryOf, watchSandbox } from './installed-run.ts';

const hello = helloDataset();
const REAL_KEY = 'sk-berth-test-REAL-0a1e5c2f6d7b4e39';
const provider = new DockerSandboxProvider(docker);
// Building CPython once per host on a loaded 2-core machine, then the layer.
const INSTALL_TIMEOUT = 3_000_000;
const MODEL = 'openai/gpt-4.1-mini';

let cluster: TestCluster;
let fake: FakeVendors;

beforeAll(async () => {
  fake = await startFakeVendors(REAL_KEY);
  Object.assign(process.env, { OPENAI_API_KEY: REAL_KEY, OPENAI_BASE_URL: `${fake.url}/v1`, BERTH_GATEWAY_RETRY_BASE_MS: '50' });
  cluster = await startTestWorkers('openhands');
}, 120_000);
afterAll(async () => {
  await cluster?.stop();
  await fake?.close();
});

interface ToolCall { function_name: string; arguments: Record<string, unknown>; }

describe('openhands installed into a layer with its own Python, on examples/hello', () => {
  it('scores 1 through the gateway: the usage the model reported, its terminal call in the ATIF transcript, and no key in the sandbox', async () => {
    const tag = layerTag(await imageId(provider, 'berth-base:bookworm'), INSTALLED_AGENTS.openhands);
    const from = fake.reported.length;
    const batchId = `installed-openhands-${Date.now().toString(36)}`;
    const watch = watchSandbox(fake, REAL_KEY, () => batchId);
    const started = Date.now();
    const { rows } = await runHello(cluster, hello, 'openhands', MODEL, { batchId, prepare: true }).finally(() => { fake.beforeFinish = undefined; });
    const row = rows[0]!;
    if (process.env.BERTH_TEST_TIMINGS) console.log('openhands', (Date.now() - started) / 1000, JSON.stringify(row.timings));
    expect(row, row.failure_reason ?? '').toMatchObject({ reward: 1, mask_sample: false, failure_kind: null });

    const trajectory = trajectoryOf(row) as { steps: Array<{ tool_calls?: ToolCall[] }> };
    expect(validateAtif(trajectory)).toEqual({ ok: true });
    const calls = trajectory.steps.flatMap((s) => s.tool_calls ?? []);
    expect(calls).toContainEqual(expect.objectContaining({ function_name: 'terminal', arguments: expect.objectContaining({ command: WRITE_HELLO }) }));

    const answered = fake.reported.slice(from).filter((r) => !r.probe);
    expect(answered.length).toBeGreaterThanOrEqual(2);
    expect(answered.every((c) => c.path === '/v1/chat/completions')).toBe(true);
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
    const { rows } = await runHello(cluster, hello, 'openhands', MODEL, { prepare: false });
    if (process.env.BERTH_TEST_TIMINGS) console.log('openhands reused', JSON.stringify(rows[0]!.timings));
    expect(rows[0], rows[0]!.failure_reason ?? '').toMatchObject({ reward: 1 });
    const types = await activityTypes(cluster, rows[0]!.workflow_id);
    expect(types).toContain('seed');
    expect(types).not.toContain('installAgentLayer');
  }, INSTALL_TIMEOUT);
});

describe('an image the bundled Python cannot run on', () => {
  it('is refused at install, naming the glibc it needs and what the image has, before anything is fetched or built', async () => {
    await ensureShelllessImages();
    const cache = mkdtempSync(join(tmpdir(), 'berth-openhands-no-glibc-'));
    const tools = mkdtempSync(join(tmpdir(), 'berth-openhands-tools-'));
    const err = await ensureLayer(provider, INSTALLED_AGENTS.openhands, BUSYBOX_IMAGE, cache, tools).then(() => null, (e: unknown) => e);
    expect(err).toBeInstanceOf(AgentInstallFailed);
    expect((err as Error).message).toMatch(/^openhands 1\.16\.0 needs glibc >= 2\.36 in the task's image, which has no glibc \(a musl or distroless image\?\): use a task image with glibc 2\.36 or newer/);
    expect(readdirSync(cache)).toEqual([]);
    expect(readdirSync(tools)).toEqual([]);
  }, 120_000);
});
