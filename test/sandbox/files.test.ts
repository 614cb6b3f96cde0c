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

describe('inline writes (small uploads carried by an exec)', () => {
  it('writes a folder byte for byte with its modes, through sh and printf %b', async () => {
    const { inlineWriteScript } = await import('../../src/sandbox/files.ts');
    const src = join(host, 'inline');
    await mkdir(join(src, 'sub', 'empty'), { recursive: true });
    const weird = Buffer.from([0, 1, 0x27, 0x5c, 0x25, 0x30, 10, 13, 9, 0x7f, 0x80, 0xff, 0x5c, 0x30, 0x31]);
    await writeFile(join(src, 'sub', 'weird.bin'), weird);
    await writeFile(join(src, 'solve.sh'), "echo 'it''s' \"$HOME\" \\n %s\n");
    await chmod(join(src, 'solve.sh'), 0o750);
    const script = await inlineWriteScript(src, '/tmp/inline-dst');
    expect(script).not.toBeNull();
    const res = await provider.exec(handle, { command: `set -e\n${script!}`, user: 'root', workdir: '/' });
    expect(res.exitCode).toBe(0);
    expect(await sh(handle, 'base64 -w0 /tmp/inline-dst/sub/weird.bin')).toBe(weird.toString('base64'));
    expect(await sh(handle, 'cat /tmp/inline-dst/solve.sh')).toBe("echo 'it''s' \"$HOME\" \\n %s\n");
    expect(await sh(handle, 'stat -c %a /tmp/inline-dst/solve.sh && test -d /tmp/inline-dst/sub/empty && echo dir')).toBe('750\ndir\n');
    expect(await inlineWriteScript([{ name: 'big.txt', content: Buffer.alloc(70 * 1024, 0x61) }], '/tmp/x')).toBeNull();
  });

  it('a file a later script writes over is left out, the rest of the folder written', async () => {
    const { inlineWriteScript } = await import('../../src/sandbox/files.ts');
    const src = join(host, 'inline-later');
    await mkdir(join(src, 'sub'), { recursive: true });
    await writeFile(join(src, 'test.sh'), 'from the folder\n');
    await writeFile(join(src, 'sub', 'data.txt'), 'kept\n');
    const script = await inlineWriteScript(src, '/tmp/inline-later', new Set(['test.sh']));
    const res = await provider.exec(handle, { command: `set -e\n${script!}`, user: 'root', workdir: '/' });
    expect(res.exitCode).toBe(0);
    expect(await sh(handle, 'cat /tmp/inline-later/sub/data.txt; test -e /tmp/inline-later/test.sh || echo absent')).toBe('kept\nabsent\n');
  });
});
