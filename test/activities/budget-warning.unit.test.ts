import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { onceLog, type HostServices } from '../../src/host/deps.ts';
import { planEpisode } from '../../src/activities/shared.ts';
import { episodeTaskLoader } from '../../src/host/task-loader.ts';
import { DEFAULT_EPISODE_SETTINGS, type EpisodeInput } from '../../src/activities/types.ts';
import { DockerDriver } from '../../src/sandbox/docker/driver.ts';
import { loadTask } from '../../src/task/index.ts';
import { echoTask, writeDataset } from '../helpers/tasks.ts';

// Multi-Step Harbor Tasks § Episode time budget: a task whose turns need more than default_episode_timeout_seconds runs
// under the worst-case deadline, and "the seed logs this once per episode at WARNING level". The plan is where the
// figures are made; it logs through the worker's warnOnce, keyed by the episode. The driver talks to no engine here,
// and the plan's heartbeat after the warning needs an activity context this test does not give.
const LONG = '[environment]\ndocker_image = "berth-base:bookworm"\n[agent]\ntimeout_sec = 30000\n';
const root = writeDataset(echoTask('long', 'ok', LONG));

async function input(): Promise<EpisodeInput> {
  const task = await loadTask(join(root, 'long'), { datasetRoot: root });
  return {
    batchId: 'b', datasetName: 'd', datasetPath: root, taskId: 'long', taskPath: join(root, 'long'), digest: task.digest, repeat: 0, attempt: 1,
    agent: 'oracle', agentArgs: {}, imageAliases: {}, episodeSettings: DEFAULT_EPISODE_SETTINGS,
  };
}

describe('the episode budget warning (Multi-Step Harbor Tasks § Episode time budget)', () => {
  it('is logged once per episode: each episode of the same task logs it, a retried plan of one episode does not', async () => {
    const logged: string[] = [];
    const deps = { driver: new DockerDriver(), loadEpisodeTask: episodeTaskLoader(), warnOnce: onceLog((m) => logged.push(m)) } as Pick<HostServices, 'driver' | 'loadEpisodeTask' | 'warnOnce'> as HostServices;
    const plan = async (episodeId?: string) => expect(planEpisode(deps, await input(), episodeId)).rejects.toThrow(/activity context/i);
    await plan('berth/b/long/0');
    await plan('berth/b/long/0');
    await plan('berth/b/long/1');
    // Planning outside an episode (berth prepare, a regrade) seeds nothing and logs nothing.
    await plan();
    expect(logged).toHaveLength(2);
    expect(logged[0]).toMatch(/^long \(episode berth\/b\/long\/0\): .*default_timeout_seconds/);
    expect(logged[1]).toMatch(/^long \(episode berth\/b\/long\/1\): /);
  });

  it('onceLog remembers only the newest keys, so a long-lived worker\'s memory stays bounded', () => {
    const logged: string[] = [];
    const warn = onceLog((m) => logged.push(m), 2);
    for (const k of ['a', 'b', 'a', 'c', 'a']) warn(k, k);
    expect(logged).toEqual(['a', 'b', 'c', 'a']);
  });
});
