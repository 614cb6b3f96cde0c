// Running examples/hello with an installed agent through a real worker, and looking inside its sandbox while the
// agent runs: what the installed-agent tests share.
import { execFile, spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Docker from 'dockerode';
import { afterAll, beforeAll, expect } from 'vitest';
import { INSTALLED_AGENTS, imageId, layerExists, layerTag } from '../../src/agents/index.ts';
import { startBatch } from '../../src/client/batch.ts';
import { DockerSandboxProvider } from '../../src/sandbox/index.ts';
import { validateAtif } from '../../src/trajectory/atif.ts';
import type { AgentName, ResultRow } from '../../src/workflows/types.ts';
import type { SkippedEntry } from '../../src/client/results.ts';
import { startTestWorkers, type TestCluster } from '../helpers/temporal.ts';
import { reportedUsage, startFakeVendors, WRITE_HELLO, type FakeVendors } from './fake-vendors.ts';
import { SEEDING_ACTIVITIES } from '../helpers/warm-pool.ts';

export const docker = new Docker();

/** The fake vendors and the test file's workers, set once the file's beforeAll has run. */
export interface InstalledWorld { cluster: TestCluster; fake: FakeVendors }

/**
 * For a test file: the fake vendors accepting only `key`, the worker's environment pointing every provider at them
 * with that key (the gateway's upstreams), and workers on the file's own task queues; all stopped after the file.
 */
export function useInstalledWorld(name: string, key: string): InstalledWorld {
  const world = {} as InstalledWorld;
  beforeAll(async () => {
    world.fake = await startFakeVendors(key);
    const url = world.fake.url;
    Object.assign(process.env, {
      ANTHROPIC_API_KEY: key, ANTHROPIC_BASE_URL: url, OPENAI_API_KEY: key, OPENAI_BASE_URL: `${url}/v1`,
      GEMINI_API_KEY: key, GOOGLE_GEMINI_BASE_URL: url, BERTH_GATEWAY_RETRY_BASE_MS: '50',
    });
    world.cluster = await startTestWorkers(name);
  }, 120_000);
  afterAll(async () => {
    await world.cluster?.stop();
    await world.fake?.close();
  });
  return world;
}

/**
 * examples/hello as it is, in a dataset whose dataset.toml gives its 120 s agent budget a multiplier: on a loaded
 * 2-core machine (CI runs two test files at once) an agent's start can take a minute, which is not what this tests.
 */
export function helloDataset(): string {
  const hello = mkdtempSync(join(tmpdir(), 'berth-installed-hello-'));
  cpSync(join(import.meta.dirname, '..', '..', 'examples', 'hello'), join(hello, 'hello'), { recursive: true });
  writeFileSync(join(hello, 'dataset.toml'), '[gym.defaults]\ntimeout_multiplier = 5\n');
  return hello;
}

/**
 * Where `needle` is inside the episode's running sandbox: files the container added or changed (`docker diff`;
 * the image's own files come from the agent's package and the base image, built before any key existed), the
 * container's configured environment, and every process's environment.
 */
export async function findInSandbox(batchId: string, needle: string): Promise<{ files: string[]; environ: string[] }> {
  const [c] = await docker.listContainers({ filters: { label: [`berth.batch=${batchId}`] } });
  if (!c) throw new Error(`no running sandbox of batch ${batchId}`);
  const changed = (await docker.getContainer(c.Id).changes() as Array<{ Path: string; Kind: number }> | null ?? [])
    .filter((ch) => ch.Kind !== 2).map((ch) => ch.Path);
  // -D skip: a detached process's FIFOs are among the changed files, and reading one blocks until the agent ends,
  // which waits for the model's answer, which waits for this check.
  const script = `k="$1"
xargs -r -d '\\n' grep -lsF -D skip -- "$k" 2>/dev/null
echo ---
for e in /proc/[0-9]*/environ; do tr '\\0' '\\n' < "$e" 2>/dev/null | grep -F -- "$k"; done
true`;
  const stdout = await new Promise<string>((resolve, reject) => {
    const child = execFile('docker', ['exec', '-i', c.Id, 'sh', '-c', script, 'sh', needle], { maxBuffer: 16 << 20 }, (err, out) => (err ? reject(err) : resolve(out)));
    child.stdin!.end(`${changed.join('\n')}\n`);
  });
  const [files, environ] = stdout.split('---\n');
  const configured = ((await docker.getContainer(c.Id).inspect()).Config.Env ?? []).filter((e) => e.includes(needle));
  return { files: files!.split('\n').filter(Boolean), environ: [...configured, ...(environ ?? '').split('\n').filter(Boolean)] };
}

export async function activityTypes(cluster: TestCluster, workflowId: string): Promise<string[]> {
  const history = await cluster.client.workflow.getHandle(workflowId).fetchHistory();
  return (history.events ?? []).flatMap((e) => (e.activityTaskScheduledEventAttributes?.activityType?.name ? [e.activityTaskScheduledEventAttributes.activityType.name] : []));
}

export async function runHello(cluster: TestCluster, hello: string, agent: AgentName, model: string, extra: Partial<Parameters<typeof startBatch>[0]> = {}): Promise<{ rows: ResultRow[]; batchId: string; skipped: SkippedEntry[] }> {
  const handle = await startBatch({
    dataset: hello, agent, model, client: cluster.client, taskQueue: cluster.taskQueue,
    resultsDir: mkdtempSync(join(tmpdir(), 'berth-installed-')), ...extra,
  });
  try {
    const summary = await handle.wait();
    return { rows: summary.rows, batchId: handle.batchId, skipped: handle.skipped };
  } finally {
    await handle.close();
  }
}

export function trajectoryOf(row: ResultRow): unknown {
  return JSON.parse(readFileSync(join(row.logs_dir!, 'turn-1', 'agent', 'trajectory.json'), 'utf8'));
}

type Seen = { key: Awaited<ReturnType<typeof findInSandbox>>; token: Awaited<ReturnType<typeof findInSandbox>> };

/** The key must be nowhere in the sandbox; the episode's token must be in the agent's environment (the check sees it). */
export function watchSandbox(fake: FakeVendors, key: string, batchIdOf: () => string): { result: Promise<Seen> } {
  let resolve!: (v: Seen) => void;
  let reject!: (e: unknown) => void;
  const result = new Promise<Seen>((res, rej) => { resolve = res; reject = rej; });
  let done = false;
  fake.beforeFinish = async () => {
    if (done) return;
    done = true;
    try {
      resolve({ key: await findInSandbox(batchIdOf(), key), token: await findInSandbox(batchIdOf(), '=berth-') });
    } catch (err) {
      reject(err);
    }
  };
  return { result };
}

interface ToolCall { function_name: string; arguments: Record<string, unknown> }

/** One installed agent's run of examples/hello through the gateway, and what its model server must have seen. */
export interface GatewayCase {
  agent: AgentName;
  model: string;
  /** Every call the agent made reached the fake at a path starting so. */
  path: string;
  minCalls?: number;
  args?: Record<string, string>;
  /** A tool call the transcript holds (default: one whose arguments hold the shell command that writes hello.txt). */
  call?: Partial<ToolCall>;
}

/**
 * examples/hello with the agent through the gateway (its layer built by the batch's prepare if missing): reward 1,
 * a valid ATIF transcript with the tool call, the usage the model server reported, every call on the protocol's path,
 * and the real key nowhere: not in the sandbox (files, environments), the history, the row or the logs.
 */
export async function expectScoresThroughGateway(world: InstalledWorld, hello: string, key: string, { agent, model, path, minCalls = 2, args = {}, call }: GatewayCase): Promise<void> {
  const { fake, cluster } = world;
  const provider = new DockerSandboxProvider(docker);
  const tag = layerTag(await imageId(provider, 'berth-base:bookworm'), INSTALLED_AGENTS[agent as keyof typeof INSTALLED_AGENTS]);
  const from = fake.reported.length;
  const batchId = `installed-${agent}-${Date.now().toString(36)}`;
  const watch = watchSandbox(fake, key, () => batchId);
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
  expect(JSON.stringify(history, (_k, v: unknown) => (v instanceof Uint8Array ? Buffer.from(v).toString('utf8') : v))).not.toContain(key);
  expect(JSON.stringify(row)).not.toContain(key);
  expect(spawnSync('grep', ['-rlF', key, row.logs_dir!], { encoding: 'utf8' }).stdout).toBe('');
  expect([...fake.keysSeen].every((k) => k === key)).toBe(true);
}

/** A second episode of the agent on examples/hello starts from the layer: reward 1, no install activity in its history. */
export async function expectLayerReused(world: InstalledWorld, hello: string, agent: AgentName, model: string, args: Record<string, string> = {}): Promise<void> {
  const { rows } = await runHello(world.cluster, hello, agent, model, { prepare: false, agentArgs: args });
  if (process.env.BERTH_TEST_TIMINGS) console.log(agent, 'reused', JSON.stringify(rows[0]!.timings));
  expect(rows[0], rows[0]!.failure_reason ?? '').toMatchObject({ reward: 1 });
  const types = await activityTypes(world.cluster, rows[0]!.workflow_id);
  // A single-step episode seeds in seedThenAgentTurn (docs/performance-notes.md, One activity for the seed and the agent).
  expect(types.filter((t) => SEEDING_ACTIVITIES.includes(t))).toHaveLength(1);
  expect(types).not.toContain('installAgentLayer');
}
