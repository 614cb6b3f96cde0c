// What the engine alone costs on this machine, for reading vs-floor's targets: one container's lifecycle (create,
// start, remove: runc, the shim, docker-init, the network namespace) and one exec of `true` (runc exec), each in
// wall time and the machine's busy CPU-seconds, measured with plain dockerode four at a time.
import Docker from 'dockerode';
import { machineBusy } from './profile/cpu.ts';

const docker = new Docker();

async function exec(c: Docker.Container): Promise<void> {
  const ex = await c.exec({ Cmd: ['true'], AttachStdout: true, AttachStderr: true });
  const stream = await ex.start({});
  stream.resume();
  await new Promise((r) => stream.on('end', r));
}

async function lifecycle(execs: number): Promise<void> {
  const c = await docker.createContainer({ Image: 'berth-base:bookworm', Entrypoint: ['sleep'], Cmd: ['infinity'], HostConfig: { Init: true } });
  await c.start();
  for (let i = 0; i < execs; i++) await exec(c);
  await c.remove({ force: true });
}

async function measure(n: number, execs: number): Promise<{ cpu: number; wall: number }> {
  const busy = machineBusy();
  const t = Date.now();
  let next = 0;
  await Promise.all(Array.from({ length: 4 }, async () => { while (next++ < n) await lifecycle(execs); }));
  return { cpu: (machineBusy() - busy) / n, wall: (Date.now() - t) / 1000 / n };
}

export interface EngineCosts { container: { cpu: number; wall: number }; exec: { cpu: number; wall: number } }

/** A container's lifecycle, and one exec (the difference made by four execs a container). */
export async function engineCosts(n = 16): Promise<EngineCosts> {
  const bare = await measure(n, 0);
  const withExecs = await measure(n, 4);
  return { container: bare, exec: { cpu: (withExecs.cpu - bare.cpu) / 4, wall: (withExecs.wall - bare.wall) / 4 } };
}
