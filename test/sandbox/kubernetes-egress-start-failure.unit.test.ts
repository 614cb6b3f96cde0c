import type { CoreV1Api, KubeConfig, V1ContainerStatus, V1Pod } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { PodEgress } from '../../src/sandbox/kubernetes/egress.ts';

// A controller that could not set its first rules is the seed's failure, with what it printed. The kubelet may count
// a restart before it fills the container's last state in (seen on the local cluster: restartCount 1, lastState {}).

const podWith = (status: Partial<V1ContainerStatus>): V1Pod => ({
  metadata: { name: 'p' },
  status: { initContainerStatuses: [{ name: 'egress', image: 'i', imageID: '', ready: false, restartCount: 0, ...status }] },
});
const egress = (previousLog: string | Error) => new PodEgress({
  kubeConfig: {} as KubeConfig, namespace: 'ns',
  core: { readNamespacedPodLog: () => (previousLog instanceof Error ? Promise.reject(previousLog) : Promise.resolve(previousLog)) } as unknown as CoreV1Api,
});

describe('the egress controller\'s start failure', () => {
  it.each([
    ['never restarted', { restartCount: 0 }, '', null],
    ['its termination message', { restartCount: 1, lastState: { terminated: { exitCode: 137, message: 'xtables: not found\n' } } }, '', /could not set its network: xtables: not found$/],
    ['its previous log', { restartCount: 1, lastState: { terminated: { exitCode: 1 } } }, 'no iptables', /could not set its network: no iptables$/],
    ['restarted, last state not filled in yet, no log: not yet', { restartCount: 1, lastState: {} }, new Error('gone'), null],
    ['the same on the third restart: reported', { restartCount: 3, lastState: {} }, '', /could not set its network: no output$/],
  ] as const)('%s', async (_what, status, log, want) => {
    const got = await egress(log as string | Error).startFailure(podWith(status as Partial<V1ContainerStatus>));
    if (want === null) expect(got).toBeNull();
    else expect(got?.message).toMatch(want);
  });
});
