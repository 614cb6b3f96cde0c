// Running examples/hello with an installed agent through a real worker, and looking inside its sandbox while the
// agent runs: what the installed-agent tests share.
import { execFile } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Docker from 'dockerode';
import { afterAll, beforeAll } from 'vitest';
import { startBatch } from '../../src/client/batch.ts';
import type { AgentName, ResultRow } from '../../src/workflows/types.ts';
import type { SkippedEntry } from '../../src/client/results.ts';
import { startTestWorkers, type TestCluster } from '../helpers/temporal.ts';
import { startFakeVendors, type FakeVendors } from './fake-vendors.ts';

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
