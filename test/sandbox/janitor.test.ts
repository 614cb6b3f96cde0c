import { afterAll, describe, expect, it } from 'vitest';
import { makeSpec, provider, teardownAll } from './helpers.ts';

const made: string[] = [];
afterAll(() => teardownAll(made));

describe('janitor', () => {
  it('removes an orphan, keeps a live episode and one whose liveness is unknown', async () => {
    const orphan = makeSpec(made);
    const live = makeSpec(made);
    const unknown = makeSpec(made);
    await Promise.all([provider.seed(orphan), provider.seed(live), provider.seed(unknown)]);
    const mine = new Set([orphan, live, unknown].map((s) => s.labels.workflowId));

    const report = await provider.janitor({
      isLive: async (workflowId) => {
        if (!mine.has(workflowId)) return true; // never touch other tests' containers
        if (workflowId === unknown.labels.workflowId) throw new Error('temporal unreachable');
        return workflowId === live.labels.workflowId;
      },
    });

    expect(report.removed).toEqual([{ name: orphan.name, workflowId: orphan.labels.workflowId }]);
    expect(report.kept.map((k) => k.name)).toEqual(expect.arrayContaining([live.name, unknown.name]));
    const names = (await provider.docker.listContainers({ all: true })).map((c) => c.Names[0]);
    expect(names).toContain(`/${live.name}`);
    expect(names).not.toContain(`/${orphan.name}`);
  });
});
