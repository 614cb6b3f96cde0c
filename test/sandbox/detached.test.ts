import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SandboxHandle } from '../../src/sandbox/types.ts';
import { DockerSandboxProvider } from '../../src/sandbox/docker/provider.ts';
import { makeSpec, provider, sh, teardownAll } from './helpers.ts';
import { startDetached } from '../../src/sandbox/detached.ts';
import { CommandNotStarted } from '../../src/sandbox/errors.ts';

const made: string[] = [];
let handle: SandboxHandle;

beforeAll(async () => {
  handle = (await provider.seed(makeSpec(made, { user: 'nobody', workdir: '/tmp/agent' }))).handle;
});
afterAll(() => teardownAll(made));

const CHILD = fileURLToPath(new URL('./fixtures/start-detached.ts', import.meta.url));

describe('detached processes', () => {
  it('outlive a caller killed with SIGKILL and can be re-attached', async () => {
    const command = 'echo "run $(id -un)" >> /tmp/agent/runs; sleep 2; echo finished; exit 7';
    const child = spawn(process.execPath, ['--import', 'tsx', CHILD, handle.name, 'turn-1', command], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const [line] = (await once(child.stdout, 'data')) as [Buffer];
    expect(line.toString().trim()).toBe('started');
    child.kill('SIGKILL');
    await once(child, 'exit');

    // Starting the same key again only re-attaches.
    const again = await startDetached(provider.driver, handle, { key: 'turn-1', command });
    expect(again.started).toBe(false);

    const polls: number[] = [];
    const result = await provider.waitDetached(handle, 'turn-1', { pollMs: 200, onPoll: ({ elapsedMs }) => void polls.push(elapsedMs) });
    expect(result).toMatchObject({ exitCode: 7, timedOut: false });
    expect(polls.length).toBeGreaterThan(0);
    expect(await sh(handle, `cat ${result.outputPath}`)).toBe('finished\n');
    expect(await sh(handle, 'cat /tmp/agent/runs')).toBe('run nobody\n');
  });

  it('reports a timeout enforced inside the container', async () => {
    await startDetached(provider.driver, handle, { key: 'slow', command: 'sleep 300', timeoutSec: 1 });
    const result = await provider.waitDetached(handle, 'slow', { pollMs: 200 });
    expect(result).toMatchObject({ timedOut: true });
    expect(await sh(handle, 'ps -eo args')).not.toContain('sleep 300');
  });

  it('launches in one call: claims, prepares, starts, waits and returns the output tail; a second launch re-attaches', async () => {
    for (const user of ['root', 'nobody']) {
      const key = `launch-${user}`;
      const opts = { key, command: 'echo "hi $(id -un) $(cat /tmp/agent/prepared-' + user + ')"', user, timeoutSec: 60, outputPath: `/tmp/agent/${key}.txt`, tailBytes: 1024 };
      const first = await provider.launchDetached(handle, { ...opts, prepareScript: `echo prepared > /tmp/agent/prepared-${user}; chmod 644 /tmp/agent/prepared-${user}` });
      expect(first).toMatchObject({ state: 'started', done: { exitCode: 0, timedOut: false, output: { size: user.length + 13, tail: `hi ${user} prepared\n` } } });
      const again = await provider.launchDetached(handle, { ...opts, prepareScript: 'echo must-not-run > /tmp/agent/ran-twice' });
      expect(again).toMatchObject({ state: 'exists', done: { exitCode: 0 } });
    }
    expect(await sh(handle, 'ls /tmp/agent')).not.toContain('ran-twice');
  });

  it('a launch waits for the process it started without looking (no sleep per look), and answers at its bound', async () => {
    for (const user of ['root', 'nobody']) {
      // A process of 0.8 s: done in the launch's answer, woken by its end. Looks every few milliseconds would each
      // have been a `sleep` process (about 30 of them); the pids the launch used count them.
      const pid = async () => Number((await sh(handle, 'echo $$')).trim());
      const before = await pid();
      const quick = await provider.launchDetached(handle, { key: `quick-${user}`, command: 'sleep 0.8; echo quick', user, timeoutSec: 60 });
      const used = (await pid()) - before;
      expect(quick).toMatchObject({ state: 'started', done: { exitCode: 0 } });
      console.log(`launch of a 0.8 s process as ${user}: ${used} pids`);
      expect(used).toBeLessThan(35); // 22 as root, 27 as nobody (two execs); 57 with looks every 5-25 ms
      // A slow one: the launch answers at its bound (1 s) while the process still runs, and leaves no timer behind.
      const slow = await provider.launchDetached(handle, { key: `slow-${user}`, command: 'sleep 6', user, timeoutSec: 60 });
      expect(slow.done).toBeUndefined();
      const sleeps = (await sh(handle, 'ps -eo args')).split('\n').filter((a) => a.startsWith('sleep'));
      expect(sleeps).toEqual(['sleep 6']);
      expect(await provider.waitDetached(handle, `slow-${user}`, { pollMs: 200 })).toMatchObject({ exitCode: 0 });
    }
  });

  it('gives the claim back when preparing fails, so the next attempt prepares and starts', async () => {
    const opts = { key: 'launch-prep', command: 'echo ok', user: 'root', tailBytes: 1024 };
    await expect(provider.launchDetached(handle, { ...opts, prepareScript: 'echo no-space >&2; false' })).rejects.toThrow(/preparing .* failed \(1\): no-space/);
    const next = await provider.launchDetached(handle, { ...opts, prepareScript: 'true' });
    expect(next).toMatchObject({ state: 'started', done: { exitCode: 0, output: { tail: 'ok\n' } } });
  });

  it('a launch as a user the image lacks never starts: CommandNotStarted saying so (the driver\'s no-user), the claim given back', async () => {
    const opts = { key: 'launch-ghost', command: 'echo ok', user: 'ghost', tailBytes: 1024 };
    const err = await provider.launchDetached(handle, opts).then(() => undefined, (e: unknown) => e);
    expect(err).toBeInstanceOf(CommandNotStarted);
    expect((err as CommandNotStarted).notStarted.reason).toBe('no-user');
    expect((err as Error).message).toMatch(/could not start detached process "launch-ghost".*ghost/);
    const next = await provider.launchDetached(handle, { ...opts, user: 'root' });
    expect(next).toMatchObject({ state: 'started', done: { exitCode: 0, output: { tail: 'ok\n' } } });
  });

  // The issue this answers measured about 0.025 busy cores per waiting episode with one exec per poll. Through exec
  // (a worker that did not create the sandbox has no channel to it) and over the channel (one request, answered once).
  it('waits for a running process with one exec, woken by its end rather than by looking', async () => {
    const viaExec = new DockerSandboxProvider();
    await startDetached(viaExec.driver, handle, { key: 'quiet', command: 'sleep 6; exit 4', timeoutSec: 60 });
    const since = Math.floor(Date.now() / 1000) - 1;
    const result = await viaExec.waitDetached(handle, 'quiet', { pollMs: 1000 });
    expect(result).toMatchObject({ exitCode: 4, timedOut: false });
    const events = await provider.docker.getEvents({ since, until: Math.ceil(Date.now() / 1000) + 1, filters: { container: [handle.containerId], event: ['exec_create'] } });
    const text = await new Promise<string>((resolve) => { let t = ''; events.on('data', (d) => { t += d; }); events.on('end', () => resolve(t)); });
    // Every exec's command line names its key; this file's other tests run execs of their own on the container.
    const actions = text.split('\n').filter(Boolean).map((l) => (JSON.parse(l) as { Action: string }).Action);
    expect(actions.filter((a) => a.startsWith('exec_create: bash -c') && a.includes('berth-wait /var/lib/berth/run/quiet '))).toHaveLength(1);
    expect(await sh(handle, 'ls /var/lib/berth/run/quiet')).not.toMatch(/wait\./);
  });

  it('waits for a running process with one request over the channel, woken by its end rather than by looking', async () => {
    // Each answer is one header line on the keep-alive's output (the container's log); nothing else runs meanwhile.
    const answers = async () => ((await provider.docker.getContainer(handle.containerId).logs({ stdout: true })) as unknown as Buffer)
      .toString('latin1').split('\n').filter((l) => l.includes('berth:ch ')).length;
    await startDetached(provider.driver, handle, { key: 'quiet-ch', command: 'sleep 6; exit 4', timeoutSec: 60 });
    const before = await answers();
    const result = await provider.waitDetached(handle, 'quiet-ch', { pollMs: 1000 });
    expect(result).toMatchObject({ exitCode: 4, timedOut: false });
    expect(await answers()).toBe(before + 1);
    expect(await sh(handle, 'ls /var/lib/berth/run/quiet-ch')).not.toMatch(/wait\./);
  });

  it('reports a process killed from outside (no exit code written) as lost', async () => {
    await startDetached(provider.driver, handle, { key: 'victim', command: 'sleep 300', timeoutSec: 600 });
    const waiting = provider.waitDetached(handle, 'victim', { pollMs: 1000 });
    await sh(handle, 'kill -9 -- -$(cat /var/lib/berth/run/victim/pid)');
    await expect(waiting).rejects.toThrow(/ended without writing an exit code/);
  });
});
