import { Client, Connection } from '@temporalio/client';
import { afterAll, describe, expect, it } from 'vitest';
import { runJanitorCommand } from '../../src/cli/janitor.ts';
import { temporalLiveness } from '../../src/worker.ts';
import { makeSpec, provider, teardownAll } from './helpers.ts';

const made: string[] = [];
afterAll(() => teardownAll(made));

describe('berth janitor', () => {
  it('removes nothing and says so when Temporal cannot be reached', async () => {
    const spec = makeSpec(made);
    await provider.seed(spec);
    const saved = process.env.TEMPORAL_ADDRESS;
    process.env.TEMPORAL_ADDRESS = '127.0.0.1:1';
    try {
      await expect(runJanitorCommand({ json: true })).rejects.toThrow(/not reachable.*no container was removed/);
    } finally {
      if (saved === undefined) delete process.env.TEMPORAL_ADDRESS;
      else process.env.TEMPORAL_ADDRESS = saved;
    }
    expect((await provider.inspect(await provider.attach(spec.name))).running).toBe(true);
  });

  // Runs only where a Temporal server answers (the shared dev server); never runs the janitor itself,
  // which would also sweep other suites' containers.
  it('treats a workflow Temporal does not know as not live', async () => {
    const connection = await Connection.connect({
      address: process.env.TEMPORAL_ADDRESS ?? '127.0.0.1:7233',
      connectTimeout: '3s',
    }).catch(() => undefined);
    if (!connection) return;
    try {
      const isLive = temporalLiveness(new Client({ connection }));
      expect(await isLive(`berth/janitor-test/never-started/${Date.now()}`)).toBe(false);
    } finally {
      await connection.close();
    }
  });
});
