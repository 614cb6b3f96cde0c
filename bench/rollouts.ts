// `npm run bench -- rollouts [--episodes 32] [--calls 10] [--delay-ms 200] [--latency-calls 300]`: issue 41's
// benchmark, in one run:
//   the gateway's added latency per model call in training mode (p50, p99) against calling the fake engine directly,
//   and its CPU per captured call (bench/gateway-tokens.ts);
//   rollouts per hour with --episodes concurrent episodes (one group of n through the rollout API: the openai agent,
//   its --calls model calls answered after --delay-ms each, a bash tool call after each but the last), against the
//   same work driven by a plain loop (dockerode: the container, the calls straight to the engine with each tool call
//   run by an exec, the test, remove), measured in the same run. Targets: added p50 <= 5 ms, p99 <= 20 ms;
//   throughput >= 0.9 of the plain loop's.
import Docker from 'dockerode';
import { Client, Connection } from '@temporalio/client';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startRun } from '../src/client/rollouts.ts';
import { ensureServer } from '../src/server/devserver.ts';
import { parseTokenRecords, withCaptureFields } from '../src/tokens/index.ts';
import { FakePolicy } from '../test/helpers/fake-policy.ts';
import { median, startWorker } from './common.ts';
import { eventTime } from './profile/timeline.ts';
import { measureGatewayOverhead } from './gateway-tokens.ts';

type Json = Record<string, unknown>;
const docker = new Docker();
const MODEL = 'policy-bench';
const BASH_TOOL = { type: 'function', function: { name: 'bash', description: 'Run a bash command', parameters: { type: 'object', properties: { command: { type: 'string' } }, required: ['command'] } } };

/** One task: its test rewards 1 when the agent's tool calls all ran (one line each in /app/steps). */
function rolloutDataset(toolCalls: number): string {
  const root = mkdtempSync(join(tmpdir(), 'berth-bench-rollouts-'));
  const dir = join(root, 'calls');
  mkdirSync(join(dir, 'tests'), { recursive: true });
  writeFileSync(join(dir, 'task.toml'), '[environment]\ndocker_image = "berth-base:bookworm"\nworkdir = "/app"\n[agent]\ntimeout_sec = 900\n[verifier]\ntimeout_sec = 120\n');
  writeFileSync(join(dir, 'instruction.md'), 'Record each step in /app/steps.\n');
  writeFileSync(join(dir, 'tests', 'test.sh'), `#!/bin/bash\n[ "$(wc -l < /app/steps)" = ${toolCalls} ] && echo 1 > /logs/verifier/reward.txt || echo 0 > /logs/verifier/reward.txt\n`);
  return root;
}

/** The agent's script: a bash call after each of the first calls-1 answers, then a final answer. */
const scriptOf = (calls: number) => ({ messages }: { messages: Json[] }) => {
  const made = messages.filter((m) => m['role'] === 'assistant').length;
  return made < calls - 1 ? { content: `Step ${made + 1}.`, toolCalls: [{ name: 'bash', arguments: { command: `echo ${made + 1} >> /app/steps` } }] } : { content: 'All steps recorded.' };
};

async function execOut(c: Docker.Container, cmd: string): Promise<string> {
  const ex = await c.exec({ Cmd: ['bash', '-c', cmd], AttachStdout: true, AttachStderr: true });
  const stream = await ex.start({});
  const chunks: Buffer[] = [];
  stream.on('data', (d: Buffer) => chunks.push(d));
  await new Promise((r) => stream.on('end', r));
  return Buffer.concat(chunks).toString('utf8');
}

/** Where an episode's time went, in seconds: before its first call, in calls, between calls (tools), after the last. */
interface Phases { before: number; calls: number; between: number; after: number }

/** The plain loop's episode: a container, the agent's calls straight to the engine (each tool call an exec), the test, remove. */
async function plainEpisode(engineUrl: string, i: number, calls: number, t0: number): Promise<{ reward: number; phases: Phases }> {
  const phases: Phases = { before: 0, calls: 0, between: 0, after: 0 };
  let mark = t0;
  const lap = (k: keyof Phases) => { const now = Date.now(); phases[k] += (now - mark) / 1000; mark = now; };
  const c = await docker.createContainer({ name: `bench-rollout-plain-${process.pid}-${i}-${Date.now()}`, Image: 'berth-base:bookworm', Entrypoint: ['sleep'], Cmd: ['infinity'], WorkingDir: '/app', HostConfig: { Init: true } });
  try {
    await c.start();
    lap('before');
    const messages: Json[] = [{ role: 'user', content: 'Record each step in /app/steps.\n' }];
    for (let k = 0; k < calls; k++) {
      const res = await fetch(`${engineUrl}/v1/chat/completions`, {
        method: 'POST', headers: { 'content-type': 'application/json' },
        body: JSON.stringify(withCaptureFields({ model: MODEL, messages, tools: [BASH_TOOL] }, MODEL, {})),
      });
      const answer = (await res.json()) as { choices: Array<{ message: Json }> };
      const message = answer.choices[0]!.message;
      messages.push(message);
      lap('calls');
      const toolCalls = (message['tool_calls'] ?? []) as Array<{ id: string; function: { arguments: string } }>;
      if (toolCalls.length === 0) break;
      for (const t of toolCalls) {
        const out = await execOut(c, String((JSON.parse(t.function.arguments) as Json)['command']));
        messages.push({ role: 'tool', tool_call_id: t.id, content: out });
      }
      lap('between');
    }
    const reward = await execOut(c, '[ "$(wc -l < /app/steps)" = ' + String(calls - 1) + ' ] && echo 1 || echo 0');
    return { reward: Number(reward.replace(/[^0-9]/g, '').slice(-1)), phases };
  } finally {
    await c.remove({ force: true, v: true });
    lap('after');
  }
}

/** A Berth sample's phases from its token records (each call's start and length), `t0` the run's start, `end` its group's delivery. */
function berthPhases(recordsFile: string, t0: number, end: number): Phases {
  const spans = parseTokenRecords(readFileSync(recordsFile, 'utf8')).map((r) => ({ start: Date.parse(r.timing.started_at), ms: r.timing.total_ms }));
  const phases: Phases = { before: (spans[0]!.start - t0) / 1000, calls: 0, between: 0, after: 0 };
  spans.forEach((s, i) => {
    phases.calls += s.ms / 1000;
    if (i > 0) phases.between += (s.start - (spans[i - 1]!.start + spans[i - 1]!.ms)) / 1000;
  });
  phases.after = (end - (spans.at(-1)!.start + spans.at(-1)!.ms)) / 1000;
  return phases;
}

const medianPhases = (all: Phases[]): string => (['before', 'calls', 'between', 'after'] as const)
  .map((k) => `${k} ${median(all.map((p) => p[k])).toFixed(1)} s`).join(', ');

/** CPU-seconds (user + system) of a process so far. */
function processCpuSec(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) / 100;
}

/**
 * Where Berth's time goes between the calls, from the histories of the episodes and their openai turns: per activity
 * type, the median wait in its queue (scheduled to started) and its run (started to closed); and the median time
 * from one activity's close to the next one's scheduling (a workflow task).
 */
async function activityProfile(client: Client, episodeIds: string[]): Promise<string> {
  const queue: Record<string, number[]> = {};
  const run: Record<string, number[]> = {};
  const turnaround: number[] = [];
  const wfQueue: number[] = [];
  const wfRun: number[] = [];
  for (const id of episodeIds.flatMap((e) => [e, `${e}/turn-1`])) {
    const events = (await client.workflow.getHandle(id).fetchHistory()).events ?? [];
    const scheduled = new Map<string, { type: string; at: number }>();
    const started = new Map<string, number>();
    let lastClosed: number | null = null;
    let wfScheduled = 0;
    let wfStarted = 0;
    for (const e of events) {
      const at = eventTime(e);
      if (e.workflowTaskScheduledEventAttributes) wfScheduled = at;
      if (e.workflowTaskStartedEventAttributes) { wfStarted = at; wfQueue.push(at - wfScheduled); }
      if (e.workflowTaskCompletedEventAttributes) wfRun.push(at - wfStarted);
      const s = e.activityTaskScheduledEventAttributes;
      if (s) {
        scheduled.set(String(e.eventId), { type: s.activityType?.name ?? '?', at });
        if (lastClosed !== null) turnaround.push(at - lastClosed);
        lastClosed = null;
      }
      const st = e.activityTaskStartedEventAttributes;
      if (st) started.set(String(st.scheduledEventId), at);
      const closed = e.activityTaskCompletedEventAttributes ?? e.activityTaskFailedEventAttributes;
      const from = closed && scheduled.get(String(closed.scheduledEventId));
      if (from) {
        const begun = started.get(String(closed.scheduledEventId)) ?? from.at;
        (queue[from.type] ??= []).push(begun - from.at);
        (run[from.type] ??= []).push(at - begun);
        lastClosed = at;
      }
    }
  }
  const types = Object.keys(run).sort((a, b) => median(run[b]!) * run[b]!.length - median(run[a]!) * run[a]!.length);
  return [
    `  activity close to next scheduled (workflow task), median ${median(turnaround).toFixed(0)} ms over ${turnaround.length}; a workflow task waits ${median(wfQueue).toFixed(0)} ms to start and runs ${median(wfRun).toFixed(0)} ms (medians of ${wfRun.length})`,
    ...types.map((t) => `  ${t.padEnd(22)} x${String(run[t]!.length / episodeIds.length).padEnd(3)} queue ${median(queue[t]!).toFixed(0).padStart(5)} ms, run ${median(run[t]!).toFixed(0).padStart(5)} ms (medians)`),
  ].join('\n');
}

const perHour = (episodes: number, sec: number): number => (episodes / sec) * 3600;

export default async function bench(args: string[]): Promise<void> {
  const opt = (name: string, d: number) => { const i = args.indexOf(`--${name}`); return i >= 0 ? Number(args[i + 1]) : d; };
  const episodes = opt('episodes', 32);
  const calls = opt('calls', 10);
  const delayMs = opt('delay-ms', 200);

  const latency = await measureGatewayOverhead({ calls: opt('latency-calls', 300) });

  await ensureServer();
  const engine = await new FakePolicy({ model: MODEL, delayMs, script: scriptOf(calls) }).start();
  const queue = `bench-rollouts-${process.pid}`;
  const worker = startWorker(queue);
  const connection = await Connection.connect({ address: '127.0.0.1:7233' });
  const client = new Client({ connection });
  const dataset = rolloutDataset(calls - 1);
  const berthGroup = async (n: number) => {
    const { run } = await startRun(client, {
      key: `bench-${process.pid}-${Date.now()}`, dataset, n, agent: 'openai', agentArgs: { base_url: `${engine.url}/v1`, model: MODEL },
      policy: { endpoint: `${engine.url}/v1`, model: MODEL }, concurrency: n, taskQueue: queue,
    });
    const t = Date.now();
    const cpu0 = processCpuSec(worker.child.pid!);
    for await (const group of run.stream(0)) {
      const sec = (Date.now() - t) / 1000;
      const cpu = processCpuSec(worker.child.pid!) - cpu0;
      await run.ack(group.seq);
      const bad = group.rows.find((r) => !r.valid || r.reward !== 1 || r.training?.calls !== calls);
      if (bad) throw new Error(`a sample did not score 1 with ${calls} captured calls: ${JSON.stringify(bad)}`);
      return { sec, workerCpuSec: cpu, phases: group.rows.map((r) => berthPhases(r.tokens!, t, t + sec * 1000)), episodeIds: group.rows.map((r) => r.workflow_id!) };
    }
    throw new Error(`run ${run.key} ended without its group`);
  };
  const plainMany = async (n: number) => {
    const t = Date.now();
    const done = await Promise.all(Array.from({ length: n }, (_, i) => plainEpisode(engine.url, i, calls, t)));
    if (done.some((d) => d.reward !== 1)) throw new Error(`a plain-loop episode did not score 1: ${done.map((d) => d.reward).join(',')}`);
    return { sec: (Date.now() - t) / 1000, phases: done.map((d) => d.phases) };
  };
  let berth: { sec: number; workerCpuSec: number; phases: Phases[]; episodeIds: string[] };
  let profile = '';
  let plain: { sec: number; phases: Phases[] };
  try {
    await berthGroup(1); // warm the worker (bundle, connections, the task's prepared image)
    await plainMany(1);
    plain = await plainMany(episodes);
    berth = await berthGroup(episodes);
    profile = await activityProfile(client, berth.episodeIds);
  } finally {
    worker.child.kill('SIGTERM');
    await connection.close();
    await engine.stop();
  }
  const rows: Array<[string, number, string, string]> = [
    ['gateway added latency per call, p50 (ms)', latency.addedMs.p50, '<= 5', latency.addedMs.p50 <= 5 ? 'met' : 'MISSED'],
    ['gateway added latency per call, p99 (ms)', latency.addedMs.p99, '<= 20', latency.addedMs.p99 <= 20 ? 'met' : 'MISSED'],
    [`rollouts per hour, ${episodes} at once, / plain loop`, perHour(episodes, berth.sec) / perHour(episodes, plain.sec), '>= 0.9', perHour(episodes, berth.sec) / perHour(episodes, plain.sec) >= 0.9 ? 'met' : 'MISSED'],
  ];
  for (const [what, figure, target, met] of rows) console.log(`${what.padEnd(52)} ${figure.toFixed(3).padStart(8)}  target ${target}  ${met}`);
  console.log(`  direct call to the engine: p50 ${latency.directMs.p50} ms, p99 ${latency.directMs.p99} ms (${latency.calls} calls each way, alternating)`);
  console.log(`  rollouts per hour: berth ${perHour(episodes, berth.sec).toFixed(0)} (${berth.sec.toFixed(1)} s for the group), plain loop ${perHour(episodes, plain.sec).toFixed(0)} (${plain.sec.toFixed(1)} s); ${calls} calls of ${delayMs} ms per episode`);
  console.log(`  where an episode's time went (medians): berth ${medianPhases(berth.phases)}; plain loop ${medianPhases(plain.phases)}`);
  console.log(`  berth's episodes, from their histories:\n${profile}`);
  console.log(`CPU per captured call: gateway ${latency.cpuMsPerCapturedCall} ms (over a direct call); the whole worker during the group ${((berth.workerCpuSec * 1000) / (episodes * calls)).toFixed(1)} ms per call (episodes, sandboxes, tools and gateway together)`);
}
