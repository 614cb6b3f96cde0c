// The few container operations the first end-to-end slice needs. src/sandbox's provider supersedes it.
import Docker from 'dockerode';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { pack as tarPack, extract as tarExtract } from 'tar-stream';

export const docker = new Docker();

export async function engineId(): Promise<string> {
  const info = await docker.info();
  return String(info.ID);
}

export async function createOrAdopt(name: string, image: string, labels: Record<string, string>, workdir: string): Promise<void> {
  try {
    const existing = await docker.getContainer(name).inspect();
    if (!existing.State.Running) await docker.getContainer(name).start();
    return;
  } catch (err: any) {
    if (err?.statusCode !== 404) throw err;
  }
  const c = await docker.createContainer({
    name, Image: image, Entrypoint: ['sleep'], Cmd: ['infinity'], WorkingDir: workdir, Labels: labels,
    Healthcheck: { Test: ['NONE'] }, HostConfig: { Init: true },
  });
  await c.start();
}

export async function exec(name: string, script: string, opts: { user?: string; workdir?: string; env?: Record<string, string>; timeoutSec?: number } = {}): Promise<{ exitCode: number; output: string }> {
  const cmd = opts.timeoutSec ? ['timeout', '-k', '5', String(opts.timeoutSec), 'bash', '-c', script] : ['bash', '-c', script];
  const ex = await docker.getContainer(name).exec({
    Cmd: cmd, AttachStdout: true, AttachStderr: true, User: opts.user, WorkingDir: opts.workdir,
    Env: Object.entries(opts.env ?? {}).map(([k, v]) => `${k}=${v}`),
  });
  const stream = await ex.start({});
  const chunks: Buffer[] = [];
  const sink = new PassThrough();
  sink.on('data', (c: Buffer) => chunks.push(c));
  docker.modem.demuxStream(stream, sink, sink);
  await new Promise<void>((resolve, reject) => { stream.on('end', resolve); stream.on('error', reject); });
  let info = await ex.inspect();
  while (info.Running) { await new Promise((r) => setTimeout(r, 50)); info = await ex.inspect(); }
  return { exitCode: info.ExitCode ?? -1, output: Buffer.concat(chunks).toString('utf8') };
}

function addDir(p: ReturnType<typeof tarPack>, hostDir: string, prefix: string): void {
  for (const entry of readdirSync(hostDir)) {
    const full = join(hostDir, entry);
    const st = statSync(full);
    const name = prefix ? `${prefix}/${entry}` : entry;
    if (st.isDirectory()) {
      p.entry({ name, type: 'directory', mode: st.mode & 0o7777 });
      addDir(p, full, name);
    } else if (st.isFile()) {
      p.entry({ name, mode: st.mode & 0o7777, size: st.size }, readFileSync(full));
    }
  }
}

export async function putDir(name: string, hostDir: string, containerDir: string): Promise<void> {
  await exec(name, `mkdir -p '${containerDir}'`);
  const p = tarPack();
  addDir(p, hostDir, '');
  p.finalize();
  await docker.getContainer(name).putArchive(p as unknown as NodeJS.ReadableStream, { path: containerDir });
}

/** Text of a file in the container, or undefined when it does not exist. */
export async function readText(name: string, path: string): Promise<string | undefined> {
  let stream: NodeJS.ReadableStream;
  try {
    stream = await docker.getContainer(name).getArchive({ path });
  } catch (err: any) {
    if (err?.statusCode === 404) return undefined;
    throw err;
  }
  const ex = tarExtract();
  const parts: Buffer[] = [];
  const done = new Promise<void>((resolve, reject) => {
    ex.on('entry', (_h, s, next) => { s.on("data", (c: unknown) => parts.push(c as Buffer)); s.on('end', next); s.resume(); });
    ex.on('finish', resolve);
    ex.on('error', reject);
  });
  stream.pipe(ex);
  await done;
  return Buffer.concat(parts).toString('utf8');
}

export async function remove(name: string): Promise<void> {
  try {
    await docker.getContainer(name).remove({ force: true, v: true });
  } catch (err: any) {
    if (err?.statusCode !== 404 && err?.statusCode !== 409) throw err;
  }
}
