// `npm run bench -- agents [--calls 400] [--pairs 8]`: the model gateway's overhead per call against calling the
// fake upstream directly (median and p99, whole and streamed answers), and a sandbox's start from an agent's
// cached layer against a plain one (the layer look-up the seed does included). Floors measured in the same run.
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { INSTALLED_AGENTS, ensureLayer, imageId, layerExists, layerTag } from '../src/agents/index.ts';
import { ModelGateway, gatewayHost } from '../src/gateway/index.ts';
import { DockerSandboxProvider, containerName } from '../src/sandbox/index.ts';
import { homePath } from '../src/config/paths.ts';

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))]!;
const ms = (n: number) => `${n.toFixed(2)} ms`;
const arg = (args: string[], name: string, dflt: number) => {
  const i = args.indexOf(name);
  return i >= 0 ? Number(args[i + 1]) : dflt;
};

const CHUNKS = 20;

/** A fake OpenAI upstream: a whole chat completion, or a stream of CHUNKS events and a usage chunk. */
async function fakeUpstream(): Promise<{ url: string; close(): void }> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as { stream?: boolean };
      if (!body.stream) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ choices: [{ message: { role: 'assistant', content: 'ok' } }], usage: { prompt_tokens: 20, completion_tokens: 2 } }));
        return;
      }
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      for (let i = 0; i < CHUNKS; i++) res.write(`data: ${JSON.stringify({ choices: [{ delta: { content: `t${i} ` } }] })}\n\n`);
      res.write(`data: ${JSON.stringify({ choices: [], usage: { prompt_tokens: 20, completion_tokens: CHUNKS } })}\n\n`);
      res.end('data: [DONE]\n\n');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => server.close() };
}

async function timedCall(url: string, token: string, stream: boolean): Promise<number> {
  const t = performance.now();
  const res = await fetch(`${url}/v1/chat/completions`, {
    method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'bench', stream, messages: [{ role: 'user', content: 'hi' }] }),
  });
  await res.text();
  return performance.now() - t;
}

async function gatewayOverhead(calls: number): Promise<void> {
  const upstream = await fakeUpstream();
  const provider = new DockerSandboxProvider();
  const gateway = new ModelGateway({ host: await gatewayHost(() => provider.network.defaultRanges()) });
  await gateway.start();
  const scope = gateway.register({ label: 'bench', upstreams: { openai: { provider: 'openai', baseUrl: upstream.url, apiKey: 'sk-bench' } }, prices: {} });
  for (const stream of [false, true]) {
    for (let i = 0; i < 30; i++) { await timedCall(upstream.url, 'x', stream); await timedCall(gateway.url, scope.token, stream); }
    const direct: number[] = [];
    const via: number[] = [];
    // Alternating, so both sides see the same machine load.
    for (let i = 0; i < calls; i++) {
      direct.push(await timedCall(upstream.url, 'x', stream));
      via.push(await timedCall(gateway.url, scope.token, stream));
    }
    const extra = via.map((v, i) => v - direct[i]!);
    console.log(`gateway ${stream ? `streamed (${CHUNKS} events)` : 'whole answer'}: ${calls} calls each`);
    console.log(`  direct   median ${ms(pct(direct, 0.5))}  p99 ${ms(pct(direct, 0.99))}`);
    console.log(`  gateway  median ${ms(pct(via, 0.5))}  p99 ${ms(pct(via, 0.99))}`);
    console.log(`  overhead median ${ms(pct(via, 0.5) - pct(direct, 0.5))} (per pair: median ${ms(pct(extra, 0.5))}, p99 ${ms(pct(extra, 0.99))}); ratio ${(pct(via, 0.5) / pct(direct, 0.5)).toFixed(2)}x; target <= 5 ms median`);
  }
  console.log(`  calls recorded: ${scope.calls.length}`);
  await gateway.stop();
  upstream.close();
}

async function layerStart(pairs: number): Promise<void> {
  const provider = new DockerSandboxProvider();
  const base = 'berth-base:bookworm';
  const agent = INSTALLED_AGENTS['claude-code'];
  const layer = await ensureLayer(provider, agent, base, homePath('agent-packages'));
  console.log(`layer ${layer.tag} ${layer.built ? `built in ${layer.seconds} s` : 'already on this host'}`);
  const start = async (layered: boolean): Promise<number> => {
    const t = performance.now();
    let image = base;
    if (layered) {
      // What the seed adds for an installed agent: the task image's id, the tag, one look-up.
      const tag = layerTag(await imageId(provider, base), agent);
      if (!(await layerExists(provider, tag))) throw new Error(`no layer ${tag}`);
      image = tag;
    }
    const id = `berth/bench-agents/${randomBytes(3).toString('hex')}/1`;
    const name = containerName(id, 'r', 'agent');
    await provider.seed({ name, labels: { batch: 'bench-agents', workflowId: id, role: 'agent' }, image, env: {}, network: 'bridge', workdir: '/app' });
    const took = performance.now() - t;
    await provider.teardown(name);
    return took;
  };
  await start(false);
  await start(true);
  const plain: number[] = [];
  const layered: number[] = [];
  for (let i = 0; i < pairs; i++) {
    plain.push(await start(false));
    layered.push(await start(true));
  }
  const diff = pct(layered, 0.5) - pct(plain, 0.5);
  console.log(`sandbox start, ${pairs} pairs alternating: plain median ${ms(pct(plain, 0.5))}, from the ${agent.name} layer median ${ms(pct(layered, 0.5))}`);
  console.log(`  difference ${ms(diff)} (target: within 300 ms); ratio ${(pct(layered, 0.5) / pct(plain, 0.5)).toFixed(2)}x`);
}

export default async function main(args: string[]): Promise<void> {
  console.log(`pinned: ${Object.values(INSTALLED_AGENTS).map((a) => `${a.name} ${a.version}`).join(', ')}`);
  await gatewayOverhead(arg(args, '--calls', 400));
  await layerStart(arg(args, '--pairs', 8));
}
