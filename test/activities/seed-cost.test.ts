// What one trivial episode asks of the engine at seed and teardown (issue 25, a cheaper seed): a prebuilt image read
// once (the sandbox starts from the id just read, and every later read is answered by id), the keep-alive's setup
// seen on its attached output rather than a `top` poll, and a teardown that removes only the sandboxes the task can
// have made (no group listings, no removal of a verifier container that was never made); a failed setup still fails the
// seed with its own message. The engine's own requests are
// counted under a real Docker client, and the sandbox is asked what a fresh seed must give it.
import Docker from 'dockerode';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createHostServices, releaseHostServices, sandboxDeps } from '../../src/host/deps.ts';
import { seedAgentSandbox } from '../../src/host/seed-agent.ts';
import { sandboxKindsOf, tearDownEpisode } from '../../src/host/tear-down.ts';
import { DockerSandboxProvider } from '../../src/sandbox/docker/provider.ts';
import { containerName } from '../../src/sandbox/names.ts';
import { isSeeded, KEEP_ALIVE_READY } from '../../src/sandbox/seed-scripts.ts';
import { loadTask, type Task } from '../../src/task/index.ts';
import { writeDataset } from '../helpers/tasks.ts';
import { sh, teardownAll } from '../sandbox/helpers.ts';

/** A Docker client that records every request it sends (method and path without the query). */
function countingDocker(): { docker: Docker; calls: string[] } {
  const docker = new Docker();
  const calls: string[] = [];
  const modem = docker.modem as unknown as { dial(o: { method: string; path: string }, cb: unknown): unknown };
  const dial = modem.dial.bind(modem);
  modem.dial = (o, cb) => {
    calls.push(`${o.method} ${o.path.split('?')[0]!.replace(/^\/(containers|exec)\/(?!create$)[^/]+/, '/$1/{id}')}`);
    return dial(o, cb);
  };
  return { docker, calls };
}

const { docker, calls } = countingDocker();
const counted = new DockerSandboxProvider(docker);
const deps = await createHostServices({ provider: counted, hostQueueSuffix: `seed-cost-${randomBytes(3).toString('hex')}` });
const made: string[] = [];
afterAll(async () => {
  await releaseHostServices(deps);
  await teardownAll(made);
});

const quiet = { logger: { warn: () => undefined } };
async function taskOf(files: Record<string, string>): Promise<Task> {
  const id = `t-${randomBytes(3).toString('hex')}`;
  const root = writeDataset(Object.fromEntries(Object.entries({
    'task.toml': '[environment]\ndocker_image = "berth-base:bookworm"\nworkdir = "/app"\n',
    'instruction.md': 'x\n', 'tests/test.sh': '#!/bin/bash\necho 1 > /logs/verifier/reward.txt\n', ...files,
  }).map(([k, v]) => [`${id}/${k}`, v])));
  return loadTask(join(root, id), quiet);
}

describe('the cost of a trivial seed and teardown (issue 25)', () => {
  it('a prebuilt-image seed is four engine calls (image read once, create, one attach before the start for the ready line and then root commands, start) and gives the seeded sandbox', async () => {
    const task = await taskOf({});
    const workflowId = `berth/vitest-seed-cost/${randomBytes(4).toString('hex')}/0`;
    const runId = randomBytes(6).toString('hex');
    const name = containerName(workflowId, runId, 'agent');
    made.push(name);
    calls.length = 0;
    const { handle } = await seedAgentSandbox(sandboxDeps(counted), task, {
      name, labels: { batch: 'vitest-seed-cost', workflowId, role: 'agent' }, imageAliases: {}, hostEnv: {}, logsDir: join(task.path, '..', 'logs'), hidden: () => [],
    });
    expect(calls).toEqual(['GET /images/berth-base:bookworm/json', 'POST /containers/create', 'POST /containers/{id}/attach', 'POST /containers/{id}/start']);
    calls.length = 0;
    // Exactly what a seed gives: the working directory, the log folders, the seeded marker, the image's tag in use.
    expect(await isSeeded(counted.driver, handle)).toBe(true);
    // A root command over the keep-alive's channel: no engine call at all (docs/performance-notes.md, Commands without an exec).
    expect(calls).toEqual([]);
    expect(await sh(handle, 'cd /app && pwd && stat -c %a /logs/agent /logs/verifier')).toBe('/app\n777\n777\n');
    const image = await docker.getImage('berth-base:bookworm').inspect();
    expect((await docker.getContainer(name).inspect()).Image).toBe(image.Id);

    calls.length = 0;
    await tearDownEpisode(deps, workflowId, runId, sandboxKindsOf(task));
    expect(await deps.remover.drain(30_000)).toBe(0);
    expect(calls).toEqual(['DELETE /containers/{id}']);
    expect(await docker.getContainer(name).inspect().then(() => true, () => false)).toBe(false);
  }, 120_000);

  it("a keep-alive whose setup fails ends its output stream, and the seed fails with the setup's own message", async () => {
    const workflowId = `berth/vitest-seed-cost/${randomBytes(4).toString('hex')}/0`;
    const name = containerName(workflowId, randomBytes(6).toString('hex'), 'agent');
    made.push(name);
    const seeding = counted.seed({
      name, labels: { batch: 'vitest-seed-cost', workflowId, role: 'agent' }, image: 'berth-base:bookworm', env: {}, network: 'none', user: 'nosuchuser', workdir: '/app',
    });
    await expect(seeding).rejects.toMatchObject({ kind: 'harbor:seed_failed', message: expect.stringMatching(/preparing sandbox .* failed \(exit 1\): user nosuchuser does not exist/) });
  }, 60_000);

  // Keep-alives without the request loop: attached before the start for their output only, their commands by exec.
  it.each([
    ['prints the ready line (not in the form the channel replaces): seen on its output, no `top`', `echo '${KEEP_ALIVE_READY}'; exec sleep infinity`, false],
    ['prints nothing: seen by `top` after a second', 'exec sleep infinity', true],
  ])('a keep-alive that %s', async (_what, script, polled) => {
    const workflowId = `berth/vitest-seed-cost/${randomBytes(4).toString('hex')}/0`;
    const name = containerName(workflowId, randomBytes(6).toString('hex'), 'agent');
    made.push(name);
    calls.length = 0;
    const { handle } = await counted.driver.createOrAdoptSandbox({
      name, labels: { batch: 'vitest-seed-cost', workflowId, role: 'agent' }, image: 'berth-base:bookworm', keepAlive: ['/bin/sh', '-c', script],
      env: {}, user: 'root', workdir: '/', network: 'none',
    });
    expect(calls.slice(0, 3)).toEqual(['POST /containers/create', 'POST /containers/{id}/attach', 'POST /containers/{id}/start']);
    expect(calls.includes('GET /containers/{id}/top')).toBe(polled);
    calls.length = 0;
    expect((await counted.exec(handle, { command: 'echo here', user: 'root' })).stdout).toBe('here\n');
    expect(calls).toContain('POST /containers/{id}/exec');
  }, 60_000);

  it.each<{ what: string; files: Record<string, string>; want: ReturnType<typeof sandboxKindsOf> }>([
    { what: 'a single sandbox with a shared verifier', files: {}, want: { single: true, group: false, separateVerifier: false } },
    {
      what: 'a separate verifier', want: { single: true, group: false, separateVerifier: true },
      files: { 'task.toml': '[environment]\ndocker_image = "berth-base:bookworm"\n[verifier]\nenvironment_mode = "separate"\n[verifier.environment]\ndocker_image = "berth-base:bookworm"\n' },
    },
    {
      what: 'a Compose task', want: { single: false, group: true, separateVerifier: false },
      files: { 'task.toml': '[environment]\ndocker_image = "berth-base:bookworm"\n', 'environment/docker-compose.yaml': 'services:\n  main: {}\n' },
    },
  ])('teardown removes what $what can have made', async ({ files, want }) => {
    expect(sandboxKindsOf(await taskOf(files))).toEqual(want);
  });
});
