import { KubeConfig } from '@kubernetes/client-node';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { HostServices } from '../../src/host/deps.ts';
import { planEpisode } from '../../src/activities/shared.ts';
import { episodeTaskLoader } from '../../src/host/task-loader.ts';
import { DEFAULT_EPISODE_SETTINGS, type EpisodeInput } from '../../src/activities/types.ts';
import { DockerDriver } from '../../src/sandbox/docker/driver.ts';
import type { SandboxDriver } from '../../src/sandbox/driver.ts';
import { KubernetesDriver } from '../../src/sandbox/kubernetes/driver.ts';
import { loadTask } from '../../src/task/index.ts';
import { BASE_TOML, echoTask, writeDataset } from '../helpers/tasks.ts';

// The plan refuses, before any sandbox work, a task that needs what the worker's driver does not declare (issue 23,
// "Selecting it"): read from the driver's capabilities. Neither driver talks to its engine here (constructing one
// connects to nothing), and the refusal comes before the plan's first heartbeat.

const kubeConfig = new KubeConfig();
kubeConfig.loadFromClusterAndUser({ name: 'nowhere', server: 'https://127.0.0.1:1', skipTLSVerify: true }, { name: 'nobody' });

const root = writeDataset({ ...echoTask('offline', 'ok', `${BASE_TOML}network_mode = "no-network"\n`), ...echoTask('online') });

async function inputFor(taskId: string, agent: EpisodeInput['agent'] = 'oracle'): Promise<EpisodeInput> {
  const taskPath = join(root, taskId);
  const task = await loadTask(taskPath, { datasetRoot: root });
  return {
    batchId: 'b', datasetName: 'd', datasetPath: root, taskId, taskPath, digest: task.digest, repeat: 0, attempt: 1,
    agent, agentArgs: {}, imageAliases: {}, episodeSettings: DEFAULT_EPISODE_SETTINGS,
  };
}

function depsOn(driver: SandboxDriver): HostServices {
  const deps: Pick<HostServices, 'driver' | 'loadEpisodeTask' | 'warnOnce'> = { driver, loadEpisodeTask: episodeTaskLoader(), warnOnce: () => undefined };
  return deps as HostServices;
}

describe('planning against the driver\'s capabilities', () => {
  it('lets a no-network verifier past the check on the Kubernetes driver (its pods\' egress controller: noNetwork, networkSwitching)', async () => {
    // Past the check the plan heartbeats, which needs an activity context this test does not give.
    await expect(planEpisode(depsOn(new KubernetesDriver({ kubeConfig })), await inputFor('offline'))).rejects.toThrow(/activity context|Activity context/i);
  });

  it('lets an agent installed in the sandbox past the check on the Kubernetes driver (the model gateway reaches pods)', async () => {
    const driver = new KubernetesDriver({ kubeConfig });
    expect(driver.capabilities.modelGateway).toBe(true);
    // Past the check the plan heartbeats, which needs an activity context this test does not give.
    await expect(planEpisode(depsOn(driver), await inputFor('online', 'claude-code'))).rejects.toThrow(/activity context|Activity context/i);
  });

  it('lets the same task past the check on the Docker driver', async () => {
    // Past the check the plan heartbeats, which needs an activity context this test does not give.
    await expect(planEpisode(depsOn(new DockerDriver()), await inputFor('offline'))).rejects.toThrow(/activity context|Activity context/i);
  });
});
