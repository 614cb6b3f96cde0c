// Offline shared-mode corpus tasks end to end: the reference solution run in the agent's sandbox, then verified.
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { SandboxHandle } from '../../src/sandbox/types.ts';
import { loadTask } from '../../src/task/index.ts';
import { clearTurnFiles } from '../../src/verify/clear-turn.ts';
import { runVerification } from '../../src/verify/run-verification.ts';
import { BASE_IMAGE, context, Fixture, provider } from './orchestration-helpers.ts';
import { CORPUS } from '../helpers/corpus.ts';

const fx = new Fixture();
afterAll(() => fx.cleanup());


const ALIASES = { 'ubuntu:24.04': BASE_IMAGE };
const load = (rel: string) => loadTask(join(CORPUS, rel), { imageAliases: ALIASES, logger: { warn: () => {} } });

/** The oracle, minimally: upload a solution folder to /solution and run solve.sh as the agent. */
async function solve(dir: string, agent: SandboxHandle): Promise<void> {
  await provider.exec(agent, { command: 'rm -rf /solution', user: 'root' });
  await provider.upload(agent, dir, '/solution');
  const res = await provider.exec(agent, { command: 'bash /solution/solve.sh', timeoutSec: 60 });
  if (res.exitCode !== 0) throw new Error(`solve.sh failed (${res.exitCode}): ${res.stdout}${res.stderr}`);
}

describe('offline shared-mode corpus tasks', () => {
  for (const rel of ['harbor-examples/hello-user', 'harbor-examples/hello-workdir']) {
    it(`${rel}: the reference solution scores 1`, async () => {
      const task = await load(rel);
      const agent = await fx.seedTask(task);
      await solve(task.solution.dir!, agent);
      const r = await runVerification(context(fx, task, agent));
      expect(r).toMatchObject({ reward: 1, masked: false, verifierMode: 'shared' });
    });
  }

  it('harbor-examples/hello-multi-step-simple: each step scores 1, with the grading files cleared between turns', async () => {
    const task = await load('harbor-examples/hello-multi-step-simple');
    expect(task.steps.map((s) => s.name)).toEqual(['create-file', 'append-content']);
    const agent = await fx.seedTask(task);
    for (const [i, step] of task.steps.entries()) {
      if (i > 0) await clearTurnFiles(provider, agent, task.verifier.inputs);
      await solve(step.solution!.dir, agent);
      const r = await runVerification(context(fx, task, agent, { stepIndex: i }));
      expect(r, step.name).toMatchObject({ reward: 1, masked: false });
    }
  });
});
