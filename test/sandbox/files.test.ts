import { chmod, mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SandboxHandle } from '../../src/sandbox/types.ts';
import { makeSpec, provider, sh, teardownAll } from './helpers.ts';

const made: string[] = [];
let handle: SandboxHandle;
let host: string;

beforeAll(async () => {
  handle = (await provider.seed(makeSpec(made))).handle;
  host = await mkdtemp(join(tmpdir(), 'berth-files-'));
});
afterAll(async () => {
  await teardownAll(made);
  await rm(host, { recursive: true, force: true });
});

async function mode(path: string): Promise<string> {
  return ((await stat(path)).mode & 0o7777).toString(8);
}

describe('upload and download', () => {
  it('round-trips a folder with its modes, into a folder that did not exist', async () => {
    const src = join(host, 'src');
    await mkdir(join(src, 'bin'), { recursive: true });
    await writeFile(join(src, 'bin', 'run.sh'), '#!/bin/sh\necho ran\n');
    await chmod(join(src, 'bin', 'run.sh'), 0o755);
    await writeFile(join(src, 'secret.txt'), 'only me');
    await chmod(join(src, 'secret.txt'), 0o600);
    await chmod(join(src, 'bin'), 0o750);

    await provider.upload(handle, src, '/opt/deep/target', { owner: 'nobody' });
    expect(await sh(handle, 'cd /opt/deep/target && stat -c "%a %U %n" bin bin/run.sh secret.txt && bin/run.sh')).toBe(
      '750 nobody bin\n755 nobody bin/run.sh\n600 nobody secret.txt\nran\n',
    );

    const back = join(host, 'back');
    await provider.download(handle, '/opt/deep/target', back);
    expect(await readFile(join(back, 'bin', 'run.sh'), 'utf8')).toBe('#!/bin/sh\necho ran\n');
    expect(await mode(join(back, 'bin', 'run.sh'))).toBe('755');
    expect(await mode(join(back, 'secret.txt'))).toBe('600');
    expect(await mode(join(back, 'bin'))).toBe('750');
  });

  it('uploads entries and single files, and downloads a single file by name', async () => {
    await provider.upload(handle, [{ name: 'a/b.txt', content: 'hello', mode: 0o640 }], '/data');
    const one = join(host, 'one.sh');
    await writeFile(one, 'echo one');
    await chmod(one, 0o700);
    await provider.upload(handle, one, '/data');
    expect(await sh(handle, 'stat -c "%a %n" /data/a/b.txt /data/one.sh')).toBe('640 /data/a/b.txt\n700 /data/one.sh\n');

    const out = join(host, 'single');
    await provider.download(handle, '/data/one.sh', out);
    expect(await readFile(join(out, 'one.sh'), 'utf8')).toBe('echo one');
    expect(await mode(join(out, 'one.sh'))).toBe('700');
  });

  it('says which path is missing', async () => {
    await expect(provider.download(handle, '/no/such/thing', join(host, 'x'))).rejects.toThrow(
      '/no/such/thing does not exist',
    );
  });
});
