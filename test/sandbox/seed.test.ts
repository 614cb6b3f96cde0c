import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { SandboxNeverReady, SeedFailed } from '../../src/sandbox/errors.ts';
import { LABEL_WORKFLOW } from '../../src/sandbox/names.ts';
import { makeSpec, provider, sh, teardownAll } from './helpers.ts';

const made: string[] = [];
afterEach(() => teardownAll(made));

async function seedFailure(promise: Promise<unknown>): Promise<SeedFailed> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(SeedFailed);
  return err as SeedFailed;
}

describe('seed', () => {
  it('creates once and adopts on a second seed, with keep-alive, labels and limits', async () => {
    const spec = makeSpec(made, { cpus: 0.5, memoryMb: 256, env: { GREETING: 'hi' } });
    const first = await provider.seed(spec);
    const second = await provider.seed(spec);
    expect(first.adopted).toBe(false);
    expect(second.adopted).toBe(true);
    expect(second.handle.containerId).toBe(first.handle.containerId);

    const list = await provider.docker.listContainers({
      all: true,
      filters: { label: [`${LABEL_WORKFLOW}=${spec.labels.workflowId}`] },
    });
    expect(list).toHaveLength(1);

    const info = await provider.docker.getContainer(first.handle.containerId).inspect();
    expect(info.HostConfig.Init).toBe(true);
    expect(info.HostConfig.NanoCpus).toBe(5e8);
    expect(info.HostConfig.Memory).toBe(256 * 1024 * 1024);
    expect(info.HostConfig.NetworkMode).toBe('none');
    expect(info.Config.Healthcheck?.Test).toEqual(['NONE']);
    expect(info.Config.Labels).toMatchObject({ 'berth.batch': spec.labels.batch, 'berth.role': 'agent' });

    const out = await sh(first.handle, 'echo $GREETING; stat -c "%a %n" /logs/agent /logs/verifier /logs/artifacts');
    expect(out).toBe('hi\n777 /logs/agent\n777 /logs/verifier\n777 /logs/artifacts\n');
  });

  it('replaces a half-seeded container with the same name instead of adding a second one', async () => {
    const spec = makeSpec(made, { workdir: '/app', user: 'nobody' });
    const stale = await provider.docker.createContainer({
      name: spec.name,
      Image: spec.image,
      Entrypoint: ['sleep', 'infinity'],
      Labels: { [LABEL_WORKFLOW]: spec.labels.workflowId },
    });
    await stale.start();
    const { handle, adopted } = await provider.seed(spec);
    expect(adopted).toBe(false);
    expect(handle.containerId).not.toBe(stale.id);
    const list = await provider.docker.listContainers({
      all: true,
      filters: { label: [`${LABEL_WORKFLOW}=${spec.labels.workflowId}`] },
    });
    expect(list.map((c) => c.Id)).toEqual([handle.containerId]);
  });

  it('uploads environment files into the working directory, owned by the agent user', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'berth-seed-'));
    try {
      await writeFile(join(dir, 'data.csv'), 'a,b\n');
      const spec = makeSpec(made, { workdir: '/app', user: 'nobody', uploadDirs: [{ hostDir: dir, containerDir: '/app' }] });
      const { handle } = await provider.seed(spec);
      expect(await sh(handle, 'stat -c "%U %n" /app/data.csv && cat /app/data.csv')).toBe('nobody /app/data.csv\na,b\n');
      expect((await provider.seed(spec)).adopted).toBe(true);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('runs overlay RUN lines in order with the env, cwd and user in effect at each', async () => {
    const spec = makeSpec(made, {
      user: 'builder',
      workdir: '/home/builder/work',
      overlay: {
        timeoutSec: 60,
        runs: [
          { command: 'useradd -m builder && echo "one $STAGE" > /tmp/trace && chmod 666 /tmp/trace', env: { STAGE: 'a' }, workdir: '/', user: '' },
          { command: 'echo "two $STAGE $(pwd) $(id -un)" >> /tmp/trace', env: { STAGE: 'b' }, workdir: '/opt/app', user: 'root' },
          { command: 'echo "three $STAGE $(pwd) $(id -un)" >> /tmp/trace', env: { STAGE: 'c' }, workdir: '/home/builder', user: 'builder' },
        ],
      },
    });
    const { handle } = await provider.seed(spec);
    expect(await sh(handle, 'cat /tmp/trace')).toBe('one a\ntwo b /opt/app root\nthree c /home/builder builder\n');
    expect(await sh(handle, 'echo "$(id -un) $(pwd) $(stat -c %U .)"', handle.user)).toBe(
      'builder /home/builder/work builder\n',
    );
  });

  it('fails the seed with overlay_failed and the failing line output', async () => {
    const spec = makeSpec(made, {
      overlay: {
        timeoutSec: 60,
        runs: [
          { command: 'true', env: {}, workdir: '/', user: '' },
          { command: 'echo broken-dependency >&2; exit 3', env: {}, workdir: '/', user: '' },
          { command: 'touch /never', env: {}, workdir: '/', user: '' },
        ],
      },
    });
    const err = await seedFailure(provider.seed(spec));
    expect(err.kind).toBe('harbor:overlay_failed');
    expect(err).not.toBeInstanceOf(SandboxNeverReady);
    expect(err.message).toContain('RUN line 2 of 3');
    expect(err.message).toContain('exit code 3');
    expect(err.message).toContain('broken-dependency');
  });

  it('passes a healthcheck that becomes healthy and fails one whose retries are spent', async () => {
    const healthy = makeSpec(made, {
      healthchecks: [{
        command: 'test -e /tmp/ready || { touch /tmp/ready; exit 1; }',
        intervalSec: 0.2,
        timeoutSec: 5,
        startPeriodSec: 0,
        startIntervalSec: 0.2,
        retries: 3,
      }],
    });
    await expect(provider.seed(healthy)).resolves.toMatchObject({ adopted: false });

    const sick = makeSpec(made, {
      healthchecks: [{
        command: 'echo attempt >> /tmp/attempts; echo not-ready; exit 1',
        intervalSec: 0.2,
        timeoutSec: 5,
        startPeriodSec: 0,
        startIntervalSec: 0.2,
        retries: 3,
      }],
    });
    const err = await seedFailure(provider.seed(sick));
    expect(err.kind).toBe('harbor:seed_failed');
    // Typed as never ready: the seed activity seeds again while it has attempts left (a fresh seed may come up healthy).
    expect(err).toBeInstanceOf(SandboxNeverReady);
    expect(err.message).toMatch(/healthcheck .* failed 3 times/);
    expect(err.message).toContain('not-ready');
    const h = await provider.attach(sick.name);
    expect((await sh(h, 'wc -l < /tmp/attempts')).trim()).toBe('3');
  });

  it('does not count healthcheck failures inside the start period', async () => {
    const spec = makeSpec(made, {
      healthchecks: [{
        command: 'echo attempt >> /tmp/attempts; exit 1',
        intervalSec: 0.1,
        timeoutSec: 5,
        startPeriodSec: 1.5,
        startIntervalSec: 0.1,
        retries: 2,
      }],
    });
    const err = await seedFailure(provider.seed(spec));
    expect(err.message).toContain('failed 2 times');
    const attempts = Number((await sh(await provider.attach(spec.name), 'wc -l < /tmp/attempts')).trim());
    expect(attempts).toBeGreaterThan(3);
  });

  it('resolves user and workdir: spec values, image defaults, and a numeric uid without passwd entry', async () => {
    const numeric = makeSpec(made, { user: '4321', workdir: '/srv/task' });
    const { handle } = await provider.seed(numeric);
    expect(handle).toMatchObject({ user: '4321', workdir: '/srv/task' });
    const res = await provider.exec(handle, { command: 'echo "$(id -u) $(pwd) $(stat -c %u .)"; touch mine' });
    expect(res).toMatchObject({ exitCode: 0, stdout: '4321 /srv/task 4321\n' });

    const defaults = makeSpec(made);
    const d = await provider.seed(defaults);
    expect(d.handle).toMatchObject({ user: 'root', workdir: '/' });
    expect(await sh(d.handle, 'echo "$(id -un) $(pwd)"', d.handle.user)).toBe('root /\n');

    const missing = makeSpec(made, { user: 'nobody-here' });
    const err = await seedFailure(provider.seed(missing));
    expect(err.kind).toBe('harbor:seed_failed');
    expect(err.message).toContain('user nobody-here does not exist');
  });

  it('runs the entrypoint beside the keep-alive and fails the seed when it exits non-zero', async () => {
    const ok = makeSpec(made, {
      entrypoint: { command: ['bash', '-c', 'echo "svc $SVC_MODE"; exec sleep 600'], env: { SVC_MODE: 'on' } },
    });
    const { handle } = await provider.seed(ok);
    expect(await sh(handle, 'cat /logs/agent/entrypoint-stdout.txt; pgrep -fc "sleep 600"')).toBe('svc on\n1\n');
    expect(await provider.entrypointState(handle)).toEqual({ state: 'running' });
    await sh(handle, 'pkill -f "sleep 600"');
    await expect.poll(() => provider.entrypointState(handle)).toEqual({ state: 'exited', exitCode: 143 });

    const bad = makeSpec(made, { entrypoint: { command: ['sh', '-c', 'echo cannot-start; exit 2'], env: {} } });
    const err = await seedFailure(provider.seed(bad));
    expect(err.kind).toBe('harbor:entrypoint_failed');
    expect(err.message).toContain('cannot-start');
  });

  it('names a missing image in a seed_failed error', async () => {
    const err = await seedFailure(provider.seed(makeSpec(made, { image: 'berth-test/not-there:1' })));
    expect(err.kind).toBe('harbor:seed_failed');
    expect(err.message).toContain('berth-test/not-there:1');
    expect(err.message).toContain('--image-alias');
  });
});
