// `npm run bench -- installed [--agents codex,aider] [--runs 3]`: what an installed agent costs on examples/hello.
// For each agent: its layer's first install on this host (the host's package fetch and the image build, skipped when
// the layer exists: then it says so) and its size over the base image; then examples/hello run --runs times with the
// `command` agent (the floor: one shell command writes the file) and with each agent against the scripted model
// server the tests use (test/agents/fake-vendors.ts), through a worker on queues of its own. Prints the medians of
// the episode's wall time and its agent phase, and each agent's overhead over `command`.
import { Client, Connection } from '@temporalio/client';
import Docker from 'dockerode';
import { cpSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { INSTALLED_AGENTS, ensureLayer, imageId, layerExists, layerTag } from '../src/agents/index.ts';
import { agentPackagesDir } from '../src/host/agent-layer.ts';
import { startBatch } from '../src/client/batch.ts';
import { homePath } from '../src/config/paths.ts';
import { DockerSandboxProvider } from '../src/sandbox/index.ts';
import { ensureServer } from '../src/server/devserver.ts';
import type { AgentName } from '../src/workflows/types.ts';
import { startFakeVendors, WRITE_HELLO } from '../test/agents/fake-vendors.ts';
import { median, startWorker } from './common.ts';

const KEY = 'sk-berth-bench-installed-5d1c';
const BASE = 'berth-base:bookworm';

/** The model each agent is run with (the protocols the tests use) and any argument it needs against the fake. */
const CASES: Record<string, { model: string; args?: Record<string, string> }> = {
  'claude-code': { model: 'anthropic/claude-sonnet-4-5' },
  codex: { model: 'openai/gpt-5-codex' },
  'mini-swe-agent': { model: 'openai/gpt-4.1-mini' },
  opencode: { model: 'openai/gpt-4.1-mini' },
  'gemini-cli': { model: 'google/gemini-2.5-pro' },
  'qwen-code': { model: 'openai/qwen3-coder-plus' },
  cline: { model: 'openai/gpt-4.1-mini' },
  aider: { model: 'openai/gpt-4.1-mini', args: { edit_format: 'whole' } },
  openhands: { model: 'openai/gpt-4.1-mini' },
};

function helloDataset(): string {
  const root = mkdtempSync(join(tmpdir(), 'berth-bench-installed-'));
  cpSync(join(import.meta.dirname, '..', 'examples', 'hello'), join(root, 'hello'), { recursive: true });
  writeFileSync(join(root, 'dataset.toml'), '[gym.defaults]\ntimeout_multiplier = 5\n');
  return root;
}

export default async function bench(args: string[]): Promise<void> {
  const opt = (name: string) => { const i = args.indexOf(`--${name}`); return i >= 0 ? args[i + 1] : undefined; };
  const runs = Number(opt('runs') ?? 3);
  const agents = (opt('agents')?.split(',') ?? Object.keys(CASES)).filter((a) => {
    if (!CASES[a] || !INSTALLED_AGENTS[a as keyof typeof INSTALLED_AGENTS]) throw new Error(`--agents: ${a} is not an installed agent (there are: ${Object.keys(CASES).join(', ')})`);
    return true;
  });
  const docker = new Docker();
  const provider = new DockerSandboxProvider(docker);
  const baseId = await imageId(provider, BASE);
  const baseSize = (await docker.getImage(BASE).inspect()).Size;

  console.log('layers (first install on this host: package fetch and image build):');
  for (const a of agents) {
    const agent = INSTALLED_AGENTS[a as keyof typeof INSTALLED_AGENTS];
    const tag = layerTag(baseId, agent);
    const had = await layerExists(provider, tag);
    const r = had ? null : await ensureLayer(provider, agent, BASE, agentPackagesDir(), homePath('tools'));
    const size = ((await docker.getImage(tag).inspect()).Size - baseSize) / 1e6;
    console.log(`  ${a.padEnd(15)} ${agent.version.padEnd(10)} layer ${size.toFixed(0).padStart(5)} MB over the base; install ${r ? `${r.seconds.toFixed(1)} s` : '(cached: not measured)'}`);
  }

  const fake = await startFakeVendors(KEY);
  Object.assign(process.env, {
    ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: fake.url, OPENAI_API_KEY: KEY, OPENAI_BASE_URL: `${fake.url}/v1`,
    GEMINI_API_KEY: KEY, GOOGLE_GEMINI_BASE_URL: fake.url,
  });
  await ensureServer();
  const queue = `bench-installed-${process.pid}`;
  const worker = startWorker(queue, { slots: 8 });
  const connection = await Connection.connect({ address: '127.0.0.1:7233' });
  const client = new Client({ connection });
  const hello = helloDataset();
  const resultsDir = mkdtempSync(join(tmpdir(), 'berth-bench-installed-results-'));
  const episode = async (agent: AgentName, model: string | undefined, agentArgs: Record<string, string>) => {
    const t = Date.now();
    const handle = await startBatch({ dataset: hello, agent, model, agentArgs, concurrency: 1, resultsDir, taskQueue: queue, client, prepare: false });
    const { rows } = await handle.wait();
    await handle.close();
    const row = rows[0]!;
    if (row.reward !== 1) throw new Error(`${agent} did not score 1: ${JSON.stringify(row)}`);
    return { wall: (Date.now() - t) / 1000, agent: row.timings?.agent ?? NaN };
  };
  const measure = async (agent: AgentName, model: string | undefined, agentArgs: Record<string, string>) => {
    await episode(agent, model, agentArgs); // the first run of each agent warms what a later one reuses (the worker's bundle, the layer's pages)
    const out = [];
    for (let i = 0; i < runs; i++) out.push(await episode(agent, model, agentArgs));
    return { wall: median(out.map((o) => o.wall)), agent: median(out.map((o) => o.agent)) };
  };
  try {
    const floor = await measure('command', undefined, { cmd: WRITE_HELLO });
    console.log(`\nexamples/hello, medians of ${runs} runs after one warm-up (one at a time):`);
    console.log(`  ${'command'.padEnd(15)} episode ${floor.wall.toFixed(2)} s, agent phase ${floor.agent.toFixed(2)} s (the floor)`);
    for (const a of agents) {
      const m = await measure(a as AgentName, CASES[a]!.model, CASES[a]!.args ?? {});
      console.log(`  ${a.padEnd(15)} episode ${m.wall.toFixed(2)} s, agent phase ${m.agent.toFixed(2)} s: overhead over command ${(m.wall - floor.wall).toFixed(2)} s per episode`);
    }
  } finally {
    worker.child.kill('SIGTERM');
    await connection.close();
    await fake.close();
  }
}
