// The agent's sandbox as the seed activity makes it, on the real engine: the image's configuration on record
// (Task Folder Verifiers § Image entrypoint), the working directory (NeMo Gym 0.7),
// CPU-count hints (Task Folder Verifiers § Environment variables and secrets), base images pinned at prepare
// (Task Folder Format § Dockerfile modes), GPUs (Task Folder Format § Environment) and multi-stage builds.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { prepareAndRecord } from '../../src/host/image-prep.ts';
import { sandboxDeps } from '../../src/host/deps.ts';
import { seedAgentSandbox } from '../../src/host/seed-agent.ts';
import { SeedFailed } from '../../src/sandbox/errors.ts';
import { prepareAgentImage } from '../../src/sandbox/image-prep.ts';
import { containerName } from '../../src/sandbox/names.ts';
import type { SandboxHandle } from '../../src/sandbox/types.ts';
import { loadTask, type Task } from '../../src/task/index.ts';
import { writeDataset } from '../helpers/tasks.ts';
import { BASE_IMAGE, provider, sh, teardownAll } from '../sandbox/helpers.ts';

const made: string[] = [];
const images: string[] = [];
afterAll(async () => {
  await teardownAll(made);
  for (const i of images) await provider.docker.getImage(i).remove({ force: true }).catch(() => undefined);
});

const TOML = '[agent]\ntimeout_sec = 60\n[verifier]\ntimeout_sec = 60\n';

/** A task folder whose files are given relative to it (task.toml, environment/…); instruction and tests added. */
async function taskOf(files: Record<string, string>): Promise<Task> {
  const id = `t-${randomBytes(3).toString('hex')}`;
  const all: Record<string, string> = { 'task.toml': TOML, 'instruction.md': 'x\n', 'tests/test.sh': '#!/bin/bash\necho 1 > /logs/verifier/reward.txt\n', ...files };
  const root = writeDataset(Object.fromEntries(Object.entries(all).map(([k, v]) => [`${id}/${k}`, v])));
  return loadTask(join(root, id), { logger: { warn: () => undefined } });
}

async function seed(task: Task, aliases: Record<string, string> = {}, hostEnv: Record<string, string> = {}): Promise<SandboxHandle> {
  const workflowId = `berth/vitest-seed-image/${randomBytes(4).toString('hex')}/0`;
  const name = containerName(workflowId, 'run', 'agent');
  made.push(name);
  const logsDir = mkdtempSync(join(tmpdir(), 'berth-seed-image-'));
  return (await seedAgentSandbox(sandboxDeps(provider), task, { name, labels: { batch: 'vitest-seed-image', workflowId, role: 'agent' }, imageAliases: aliases, hostEnv, logsDir, hidden: () => [] })).handle;
}

const builtTag = async (task: Task): Promise<string> => {
  const { agent } = await prepareAndRecord(provider, task, {});
  images.push(agent.name);
  return agent.name;
};

describe('the image entrypoint (Task Folder Verifiers § Image entrypoint)', () => {
  it('runs with sh -c "sleep infinity" in place of CMD: the CMD (a server) never runs', async () => {
    const task = await taskOf({
      'environment/Dockerfile': `FROM ${BASE_IMAGE}\nCOPY --chmod=755 entry.sh /entry.sh\nENTRYPOINT ["/entry.sh"]\nCMD ["python3", "-m", "http.server", "8765"]\n`,
      'environment/entry.sh': '#!/bin/sh\nprintf "%s\\n" "$@" > /tmp/entry-args\nexec "$@"\n',
    });
    await builtTag(task);
    const h = await seed(task);
    expect(await sh(h, 'cat /tmp/entry-args')).toBe('sh\n-c\nsleep infinity\n');
    expect(await sh(h, 'pgrep -f "[h]ttp.server" || echo none')).toBe('none\n');
    const probe = 'python3 -c "import socket; socket.create_connection((\'127.0.0.1\', 8765), 1)" 2>/dev/null && echo serving || echo closed';
    expect(await sh(h, probe)).toBe('closed\n');
  });
});

describe('the working directory (NeMo Gym 0.7)', () => {
  it("an image's root-owned WORKDIR is given to a non-root agent user, who can write there", async () => {
    const task = await taskOf({
      'task.toml': `${TOML.replace('[agent]\n', '[agent]\nuser = "agent"\n')}`,
      'environment/Dockerfile': `FROM ${BASE_IMAGE}\nRUN useradd -m agent && mkdir -p /srv/work && chmod 755 /srv/work && touch /srv/work/kept\nWORKDIR /srv/work\nCOPY note.txt /note.txt\n`,
      'environment/note.txt': 'x\n',
    });
    expect(task.image.mode).toBe('build');
    await builtTag(task);
    const h = await seed(task);
    expect(h).toMatchObject({ user: 'agent', workdir: '/srv/work' });
    expect(await sh(h, 'stat -c %U /srv/work /srv/work/kept')).toBe('agent\nroot\n');
    expect(await sh(h, 'touch mine && stat -c %U mine', 'agent')).toBe('agent\n');
  });
});

describe('CPU-count hints (Task Folder Verifiers § Environment variables and secrets)', () => {
  it('with cpus set, every hint reaches the sandbox; the task and the image on record win', async () => {
    const task = await taskOf({
      'task.toml': `[environment]\ncpus = 1\n[environment.env]\nOMP_NUM_THREADS = "5"\n${TOML}`,
      'environment/Dockerfile': `FROM ${BASE_IMAGE}\nENV MKL_NUM_THREADS=7\n`,
    });
    const h = await seed(task);
    const env = await sh(h, 'echo "$OMP_NUM_THREADS $MKL_NUM_THREADS $OPENBLAS_NUM_THREADS $GOMAXPROCS $PYTHON_CPU_COUNT"', 'root');
    expect(env).toBe('5 7 1 1 1\n');
    const plain = await seed(await taskOf({ 'environment/Dockerfile': `FROM ${BASE_IMAGE}\n` }));
    expect(await sh(plain, 'echo "[${OMP_NUM_THREADS-unset}]"')).toBe('[unset]\n');
  });
});

describe('base images pinned at prepare (Task Folder Format § Dockerfile modes)', () => {
  it('a tag that moves after prepare does not change the episode', async () => {
    const repo = `berth-test-pin-${randomBytes(4).toString('hex')}`;
    const ref = `${repo}:1`;
    await provider.docker.getImage(BASE_IMAGE).tag({ repo, tag: '1' });
    images.push(ref);
    const task = await taskOf({ 'environment/Dockerfile': `FROM ${ref}\nENV PINNED=yes\n` });
    const { agent } = await prepareAndRecord(provider, task, {});
    const baseId = (await provider.images.config(BASE_IMAGE))!.id;
    expect(agent.ref).toBe(baseId);
    const record = readdirSync(join(process.env.BERTH_HOME ?? join(process.env.HOME!, '.berth'), 'images')).find((f) => f.startsWith(`${task.id}-`));
    expect(JSON.parse(readFileSync(join(process.env.BERTH_HOME ?? join(process.env.HOME!, '.berth'), 'images', record!), 'utf8'))).toMatchObject({ image: ref, image_id: baseId });

    // The tag now names another image.
    const moved = await taskOf({ 'environment/Dockerfile': `FROM ${BASE_IMAGE}\nRUN echo moved > /moved\nCOPY note.txt /note.txt\n`, 'environment/note.txt': 'x\n' });
    const movedTag = await builtTag(moved);
    await provider.docker.getImage(movedTag).tag({ repo, tag: '1' });
    expect((await provider.images.config(ref))!.id).not.toBe(baseId);

    const h = await seed(task);
    const info = await provider.inspect(h);
    expect(info.image).toBe(baseId);
    expect(await sh(h, 'test -e /moved && echo moved || echo pinned; echo $PINNED')).toBe('pinned\nyes\n');
  });
});

describe('GPUs (Task Folder Format § Environment: gpus)', () => {
  it('an engine without GPUs refuses the task at prepare with a reason naming the key', async () => {
    const task = await taskOf({ 'task.toml': `[environment]\ndocker_image = "${BASE_IMAGE}"\ngpus = 1\n${TOML}` });
    const err = await prepareAndRecord(provider, task, {}).then(() => undefined, (e: unknown) => e);
    expect(err).toBeInstanceOf(SeedFailed);
    expect((err as Error).message).toContain('[environment].gpus = 1');
    expect((err as Error).message).toMatch(/cannot give containers GPUs \(could not select device driver/);
    expect(await provider.docker.listContainers({ all: true, filters: { label: ['berth.workflow=berth-gpu-probe'] } })).toEqual([]);
  });
});

describe('multi-stage Dockerfiles (Task Folder Format § Dockerfile modes: build)', () => {
  it('FROM <stage> is never aliased or pulled', async () => {
    const task = await taskOf({
      'environment/Dockerfile': `FROM ${BASE_IMAGE} AS base\nRUN echo one > /one\nFROM base\nRUN cat /one > /two\n`,
    });
    // An alias for the stage's name would send FROM to an image that does not exist.
    const prepared = await prepareAgentImage(provider, task, { 'base:latest': 'berth-test/absent-stage:1' });
    images.push(prepared.name);
    expect(prepared.name).toMatch(/^hb__/);
    const h = await seed(task, { 'base:latest': 'berth-test/absent-stage:1' });
    expect(await sh(h, 'cat /two')).toBe('one\n');
  });
});
