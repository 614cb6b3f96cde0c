import { randomBytes } from 'node:crypto';
import { spawn } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ImageBuildFailed, ImageMissing } from '../../src/sandbox/errors.ts';
import { imageContentHash, imageTagForHash, readContextFiles } from '../../src/sandbox/image-hash.ts';
import { BASE_IMAGE, makeSpec, provider, sh, teardownAll } from './helpers.ts';

const CHILD_BUILD = fileURLToPath(new URL('./fixtures/build-image.ts', import.meta.url));
const made: string[] = [];
const tags: string[] = [];
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'berth-images-'));
});
afterAll(async () => {
  await teardownAll(made);
  await Promise.all(tags.map((t) => provider.docker.getImage(t).remove({ force: true }).catch(() => undefined)));
  await rm(dir, { recursive: true, force: true });
});

describe('ensureImage', () => {
  it('accepts a local image', async () => {
    await expect(provider.images.ensure(BASE_IMAGE)).resolves.toMatchObject({ id: expect.stringMatching(/^sha256:/) });
  });

  it('raises ImageMissing naming the image and the alias option', async () => {
    const ref = `berth-test/absent-${randomBytes(3).toString('hex')}:1`;
    const err = await provider.images.ensure(ref, { aliasHint: BASE_IMAGE }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ImageMissing);
    const msg = (err as Error).message;
    expect(msg).toContain(ref);
    expect(msg).toContain(`--image-alias ${ref}=${BASE_IMAGE}`);
    expect(msg).toContain('[images.aliases]');
  });
});

describe('buildImage', () => {
  it('builds COPY --chmod with BuildKit once, even when asked twice at the same time', async () => {
    const ctx = join(dir, 'ctx');
    await mkdir(ctx);
    const nonce = randomBytes(6).toString('hex');
    await writeFile(
      join(ctx, 'Dockerfile'),
      `FROM ${BASE_IMAGE}\nCOPY --chmod=755 hello.sh /usr/local/bin/hello\nRUN echo "built ${nonce}" && hello\n`,
    );
    await writeFile(join(ctx, 'hello.sh'), '#!/bin/sh\necho hello-from-image\n', { mode: 0o600 });
    const tag = imageTagForHash(
      imageContentHash({ files: await readContextFiles(ctx), aliases: {}, buildSettings: {} }),
    );
    tags.push(tag);
    const lockDir = join(dir, 'locks');
    const logPath = join(dir, 'build.log');

    const [a, b] = await Promise.all([
      provider.images.build({ contextDir: ctx, tag, lockDir, logPath }),
      provider.images.build({ contextDir: ctx, tag, lockDir, logPath }),
    ]);
    expect([a.built, b.built].sort()).toEqual([false, true]);
    expect(await readFile(logPath, 'utf8')).toContain(`built ${nonce}`);

    const { handle } = await provider.seed(makeSpec(made, { image: tag }));
    expect(await sh(handle, 'stat -c %a /usr/local/bin/hello && hello')).toBe('755\nhello-from-image\n');

    const third = await provider.images.build({ contextDir: ctx, tag, lockDir, logPath });
    expect(third.built).toBe(false);
  });

  it('builds once across processes through the lock file', async () => {
    const ctx = join(dir, 'cross');
    await mkdir(ctx);
    await writeFile(join(ctx, 'Dockerfile'), `FROM ${BASE_IMAGE}\nRUN sleep 1 && echo ${randomBytes(6).toString('hex')} > /stamp\n`);
    const tag = `hb__test-cross-${randomBytes(4).toString('hex')}`;
    tags.push(tag);
    const args = [ctx, tag, join(dir, 'locks'), join(dir, 'cross.log')] as const;
    const child = spawn(process.execPath, ['--import', 'tsx', CHILD_BUILD, ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
    const childOut = (async () => {
      let out = '';
      for await (const c of child.stdout) out += String(c);
      return out.trim();
    })();
    await sleep(300); // let the child take the lock first most of the time; either order must build once
    const mine = await provider.images.build({ contextDir: ctx, tag, lockDir: args[2], logPath: join(dir, 'cross-mine.log') });
    const theirs = await childOut;
    expect([String(mine.built), theirs].sort()).toEqual(['false', 'true']);
  });

  it('raises ImageBuildFailed with the log tail', async () => {
    const ctx = join(dir, 'bad');
    await mkdir(ctx);
    await writeFile(join(ctx, 'Dockerfile'), `FROM ${BASE_IMAGE}\nRUN echo missing-tool-xyz >&2; exit 4\n`);
    const tag = `hb__test-bad-${randomBytes(4).toString('hex')}`;
    tags.push(tag);
    const err = await provider
      .images.build({ contextDir: ctx, tag, lockDir: join(dir, 'locks'), logPath: join(dir, 'bad.log') })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(err).toBeInstanceOf(ImageBuildFailed);
    expect((err as Error).message).toContain('exit code: 4');
    expect((err as ImageBuildFailed).logTail).toContain('missing-tool-xyz');
  });
});
