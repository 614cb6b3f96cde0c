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
import { echoTask, writeDataset } from '../helpers/tasks.ts';

// A Compose feature the Kubernetes group does not map is refused at plan, before any sandbox work, naming the file,
// the key and the fix (issue 23: what it does not support "refused before work naming the key", as the Docker path
// refuses unknown keys at load). The file is read by Compose itself (`config`, no engine), so interpolation counts.

const kubeConfig = new KubeConfig();
kubeConfig.loadFromClusterAndUser({ name: 'nowhere', server: 'https://127.0.0.1:1', skipTLSVerify: true }, { name: 'nobody' });

const compose = (sidecar: string) => `services:\n  main:\n    depends_on:\n      db:\n        condition: service_started\n  db:\n    image: berth-base:bookworm\n${sidecar}`;
const root = writeDataset({
  ...echoTask('limits'), 'limits/environment/docker-compose.yaml': compose('    ulimits:\n      nofile: 1024\n'),
  ...echoTask('named'), 'named/environment/docker-compose.yaml': compose('    user: ${DB_USER:-postgres}\n'),
  ...echoTask('plain'), 'plain/environment/docker-compose.yaml': compose('    command: ["sleep", "infinity"]\n'),
});

async function inputFor(taskId: string): Promise<EpisodeInput> {
  const taskPath = join(root, taskId);
  const task = await loadTask(taskPath, { datasetRoot: root });
  return {
    batchId: 'b', datasetName: 'd', datasetPath: root, taskId, taskPath, digest: task.digest, repeat: 0, attempt: 1,
    agent: 'oracle', agentArgs: {}, imageAliases: {}, episodeSettings: DEFAULT_EPISODE_SETTINGS,
  };
}

const depsOn = (driver: SandboxDriver): HostServices => ({ driver, loadEpisodeTask: episodeTaskLoader(), warnOnce: () => undefined }) as Pick<HostServices, 'driver' | 'loadEpisodeTask' | 'warnOnce'> as HostServices;
// Past every check the plan heartbeats, which needs an activity context these tests do not give.
const PAST_THE_CHECKS = /activity context/i;

describe('planning a Compose task against the Kubernetes group', () => {
  const kubernetes = depsOn(new KubernetesDriver({ kubeConfig }));

  it.each([
    ['a key with no counterpart in a pod', 'limits', /limits\/environment\/docker-compose\.yaml: the Kubernetes sandbox cannot run this Compose group: services\.db\.ulimits: .*\(fix: remove ulimits, or run the task with --sandbox docker\)/],
    ['a user name, after Compose interpolated it', 'named', /services\.db\.user: user "postgres" is a name/],
  ])('refuses %s, naming the key and the fix', async (_what, task, message) => {
    const plan = planEpisode(kubernetes, await inputFor(task));
    await expect(plan).rejects.toMatchObject({ type: 'berth:task_refused', nonRetryable: true });
    await expect(plan).rejects.toThrow(message);
  });

  it('lets a group it maps past the check, and the Docker driver (which runs what loads) every one', async () => {
    await expect(planEpisode(kubernetes, await inputFor('plain'))).rejects.toThrow(PAST_THE_CHECKS);
    await expect(planEpisode(depsOn(new DockerDriver()), await inputFor('limits'))).rejects.toThrow(PAST_THE_CHECKS);
  });
});
