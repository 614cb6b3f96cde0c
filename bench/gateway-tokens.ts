// What training mode adds per model call (issue 41's benchmark): the gateway's latency over calling the policy
// directly, and its CPU per captured call. One process holds the fake engine, the gateway and the caller; each call
// is made both ways in turn (same body, same engine), so the difference is the gateway's: translation, capture,
// the record's write and one more loopback hop.
import { mkdtempSync, rmSync } from 'node:fs';
import { appendFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ModelGateway } from '../src/gateway/index.ts';
import { LocalPolicyState, withCaptureFields } from '../src/tokens/index.ts';
import { FakePolicy } from '../test/helpers/fake-policy.ts';

export interface GatewayOverhead {
  calls: number;
  /** Added milliseconds per call (gateway minus direct), by percentile. */
  addedMs: { p50: number; p99: number };
  directMs: { p50: number; p99: number };
  /** This process's CPU per call through the gateway, less per direct call. */
  cpuMsPerCapturedCall: number;
}

const pct = (xs: number[], p: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return Math.round(s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]! * 1000) / 1000;
};

export async function measureGatewayOverhead(opts: { calls?: number; turns?: number } = {}): Promise<GatewayOverhead> {
  const calls = opts.calls ?? 300;
  const engine = await new FakePolicy({ model: 'policy', script: () => ({ content: 'ok, running the next command now.', toolCalls: [{ name: 'bash', arguments: { cmd: 'ls -la /app' } }] }) }).start();
  const gateway = new ModelGateway({ host: '127.0.0.1' });
  await gateway.start();
  const dir = mkdtempSync(join(tmpdir(), 'berth-bench-tokens-'));
  const policy = new LocalPolicyState({ version: 1, draining: false, endpoint: { baseUrl: engine.url, model: 'policy' }, sampling: {} });
  const file = join(dir, 'token-records.jsonl');
  const scope = gateway.register({ label: 'bench', upstreams: {}, prices: {}, training: { rolloutId: 'bench', turn: 0, policy, onRecord: (r) => { void appendFile(file, `${JSON.stringify(r)}\n`); } } });
  // A conversation of some length, as a later call of an agent's turn carries.
  const messages = [{ role: 'system', content: 'You are an agent.' }, { role: 'user', content: 'Fix the failing test in /app.' }];
  for (let i = 0; i < (opts.turns ?? 8); i++) {
    messages.push({ role: 'assistant', content: null, tool_calls: [{ id: `c${i}`, type: 'function', function: { name: 'bash', arguments: '{"cmd":"ls"}' } }] } as never);
    messages.push({ role: 'tool', tool_call_id: `c${i}`, content: 'file.txt\n'.repeat(40) } as never);
  }
  const body = { model: 'policy', messages, tools: [{ type: 'function', function: { name: 'bash', parameters: { type: 'object' } } }] };
  const direct = JSON.stringify(withCaptureFields(body, 'policy', {}));
  const viaGateway = JSON.stringify(body);
  const time = async (url: string, text: string, headers: Record<string, string>): Promise<number> => {
    const t = performance.now();
    const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: text });
    await res.text();
    return performance.now() - t;
  };
  const d: number[] = [];
  const g: number[] = [];
  let cpuDirect = 0;
  let cpuGateway = 0;
  try {
    for (let i = 0; i < calls + 20; i++) {
      const c0 = process.cpuUsage();
      const dt = await time(`${engine.url}/v1/chat/completions`, direct, {});
      const c1 = process.cpuUsage(c0);
      const gt = await time(`${gateway.url}/v1/chat/completions`, viaGateway, { authorization: `Bearer ${scope.token}` });
      const c2 = process.cpuUsage();
      if (i < 20) continue; // warm-up
      d.push(dt);
      g.push(gt);
      cpuDirect += (c1.user + c1.system) / 1000;
      cpuGateway += (c2.user + c2.system - c0.user - c0.system) / 1000 - (c1.user + c1.system) / 1000;
    }
  } finally {
    gateway.revoke(scope.token);
    await gateway.stop();
    await engine.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  const added = g.map((x, i) => x - d[i]!);
  return {
    calls, addedMs: { p50: pct(added, 50), p99: pct(added, 99) }, directMs: { p50: pct(d, 50), p99: pct(d, 99) },
    cpuMsPerCapturedCall: Math.round(((cpuGateway - cpuDirect) / calls) * 1000) / 1000,
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  measureGatewayOverhead({ calls: Number(process.argv[2] ?? 300) }).then((r) => console.log(JSON.stringify(r, null, 2)), (err: unknown) => { console.error(err); process.exit(1); });
}
