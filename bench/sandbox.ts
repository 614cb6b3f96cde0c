// Sandbox overhead: create + start + one exec + teardown through the provider, against the same
// steps on plain dockerode (the raw floor), alternating in one run so both see the same machine.
import Docker from 'dockerode';
import { randomBytes } from 'node:crypto';
import { DockerSandboxProvider } from '../src/sandbox/docker/provider.ts';
import { containerName } from '../src/sandbox/names.ts';

const IMAGE = 'berth-base:bookworm';
const BATCH = 'bench-sandbox';

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

async function viaProvider(provider: DockerSandboxProvider): Promise<number> {
  const workflowId = `berth/${BATCH}/${randomBytes(4).toString('hex')}/0`;
  const t0 = performance.now();
  const { handle } = await provider.seed({
    name: containerName(workflowId, 'run', 'agent'),
    labels: { batch: BATCH, workflowId, role: 'agent' },
    image: IMAGE,
    env: {},
    network: 'none',
  });
  try {
    const res = await provider.exec(handle, { command: 'echo ok' });
    if (res.stdout !== 'ok\n') throw new Error(`provider exec returned ${JSON.stringify(res)}`);
  } finally {
    await provider.teardown(handle);
  }
  return (performance.now() - t0) / 1000;
}

async function raw(docker: Docker): Promise<number> {
  const t0 = performance.now();
  const c = await docker.createContainer({
    name: `bench-raw-${randomBytes(4).toString('hex')}`,
    Image: IMAGE,
    Entrypoint: ['sleep'],
    Cmd: ['infinity'],
    Labels: { 'berth.batch': BATCH },
    HostConfig: { Init: true, NetworkMode: 'none' },
  });
  try {
    await c.start();
    const ex = await c.exec({ Cmd: ['bash', '-c', 'echo ok'], AttachStdout: true, AttachStderr: true });
    const stream = await ex.start({ hijack: true, stdin: false });
    const chunks: Buffer[] = [];
    for await (const chunk of stream as AsyncIterable<Buffer>) chunks.push(chunk);
    const info = await ex.inspect();
    if (info.ExitCode !== 0) throw new Error(`raw exec exited ${info.ExitCode}`);
  } finally {
    await c.remove({ force: true, v: true });
  }
  return (performance.now() - t0) / 1000;
}

export default async function bench(args: string[]): Promise<void> {
  const rounds = Number(args.find((a) => /^\d+$/.test(a)) ?? 15);
  const docker = new Docker();
  const provider = new DockerSandboxProvider(docker);
  await raw(docker); // warm-up: image layers and engine caches
  await viaProvider(provider);
  const mine: number[] = [];
  const floor: number[] = [];
  for (let i = 0; i < rounds; i++) {
    if (i % 2 === 0) {
      floor.push(await raw(docker));
      mine.push(await viaProvider(provider));
    } else {
      mine.push(await viaProvider(provider));
      floor.push(await raw(docker));
    }
  }
  const m = median(mine);
  const f = median(floor);
  console.log(`raw dockerode: ${f.toFixed(3)} s median over ${rounds}`);
  console.log(`sandbox: ${m.toFixed(3)} s per sandbox (ratio ${(m / f).toFixed(2)} to the raw floor)`);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await bench(process.argv.slice(2));
}
