// An engine that stops answering (Docker 20.10's libnetwork deadlock under container churn: docs/performance-notes.md,
// 2026-12-04 evening) loses the sandbox within the provider's bound, naming the call, instead of holding the episode
// until its activity's time limit. The engine here is a real second dockerd stopped in place (SIGSTOP): its socket
// takes the request and nothing answers, as in the deadlock.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DockerSandboxProvider } from '../../src/sandbox/docker/provider.ts';
import { SandboxLost, SeedFailed } from '../../src/sandbox/errors.ts';
import { startEngines, type Engines } from '../helpers/engines.ts';
import { waitUntil } from '../helpers/worker-process.ts';
import { BASE_IMAGE, makeSpec } from './helpers.ts';

describe('an engine that stops answering', () => {
  let cluster: Engines | undefined;
  beforeAll(async () => { cluster = await startEngines(1); }, 240_000);
  afterAll(async () => { await cluster?.stop(); }, 120_000);

  it('a seed loses its sandbox within the bound, naming the call; answering again, the engine seeds and removes as before', async () => {
    const engine = cluster!.engines[0]!;
    const provider = new DockerSandboxProvider(engine.docker, { engineAnswerSec: 3 });
    const made: string[] = [];
    const paused = async <T>(fn: () => Promise<T>): Promise<{ err: unknown; waited: number }> => {
      await engine.pause();
      const started = Date.now();
      try {
        return { err: await fn().then(() => undefined, (e: unknown) => e), waited: Date.now() - started };
      } finally {
        engine.resume();
      }
    };

    // By tag, the seed reads the image first.
    const byTag = await paused(() => provider.seed(makeSpec(made)));
    expect(byTag.err).toBeInstanceOf(SandboxLost);
    expect((byTag.err as Error).message).toContain(`did not answer the image read of ${BASE_IMAGE} within 3 s`);

    // By id, as an episode's seed starts (read once, then known): the create is the first call.
    const id = String((await engine.docker.getImage(BASE_IMAGE).inspect()).Id);
    await provider.seed(makeSpec(made, { image: id }));
    const spec = makeSpec(made, { image: id });
    const create = await paused(() => provider.seed(spec));
    expect(create.err).toBeInstanceOf(SandboxLost);
    expect((create.err as Error).message).toContain(`did not answer the create of ${spec.name} within 3 s`);
    // Unbounded, the seed waited for the engine as long as it did not answer (the deadlock: until dockerd restarted).
    expect(create.waited).toBeLessThan(60_000);

    // The create the engine took while stopped may still be made once it goes on, racing the next attempt's: the seed
    // activity's retries (three attempts) end with the sandbox, adopted or made anew.
    const retried = async (attempts = 3): Promise<Awaited<ReturnType<typeof provider.seed>>> => {
      try {
        return await provider.seed(spec);
      } catch (err) {
        if (attempts <= 1 || !(err instanceof SeedFailed || err instanceof SandboxLost)) throw err;
        await new Promise((r) => setTimeout(r, 1000));
        return retried(attempts - 1);
      }
    };
    const { handle } = await retried();
    expect((await provider.exec(handle, { command: 'echo ok', user: 'root' })).stdout.trim()).toBe('ok');

    // A command as another user goes through a docker exec (root's go over the keep-alive's channel, which needs no
    // engine call): its create is bounded too, and the next one, answered, runs.
    const exec = await paused(() => provider.exec(handle, { command: 'id -u', user: 'nobody' }));
    expect(exec.err).toBeInstanceOf(SandboxLost);
    expect((exec.err as Error).message).toContain(`did not answer an exec's create in ${handle.name} within 3 s`);
    expect(exec.waited).toBeLessThan(60_000);
    expect((await provider.exec(handle, { command: 'id -u', user: 'nobody' })).stdout.trim()).toBe('65534');

    // A warm pool's claim (the rename), the janitor's listing and a Compose group's removal (the host's remover retries
    // a failed one) are bounded the same way.
    const rename = await paused(() => provider.rename(handle, `${handle.name}-claimed`));
    expect(rename.err).toBeInstanceOf(SandboxLost);
    expect((rename.err as Error).message).toContain(`did not answer the rename of ${handle.name} within 3 s`);
    const janitor = await paused(() => provider.janitor({ isLive: () => Promise.resolve(true) }));
    expect((janitor.err as Error).message).toContain("did not answer the list of the warm pools' sandboxes within 3 s");
    expect(janitor.err).toBeInstanceOf(SandboxLost);
    const group = await paused(() => provider.driver.remove({ name: 'berth-engine-silent-group', kind: 'group' }));
    expect((group.err as Error).message).toContain('did not answer the list of the containers of group berth-engine-silent-group within 3 s');
    expect(group.err).toBeInstanceOf(SandboxLost);
    for (const bounded of [rename, janitor, group]) expect(bounded.waited).toBeLessThan(60_000);
    expect(await provider.driver.remove({ name: 'berth-engine-silent-group', kind: 'group' })).toEqual({ removed: false });

    const removal = await paused(() => provider.teardown(handle));
    expect(removal.err).toBeInstanceOf(SandboxLost);
    expect((removal.err as Error).message).toContain(`did not answer the removal of ${handle.containerId}`);
    // Answering again, the removal goes through (the one the engine took while stopped may be the one that does it).
    await provider.teardown(handle);
    await waitUntil(async () => (await engine.docker.listContainers({ all: true, filters: { id: [handle.containerId] } })).length === 0, 30_000, `${spec.name} removed`);
    await Promise.all(made.map((n) => provider.teardown(n)));
  }, 240_000);
});
