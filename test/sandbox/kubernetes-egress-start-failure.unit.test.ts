import type { V1ContainerStatus } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { controllerStartFailure } from '../../src/sandbox/kubernetes/egress.ts';

// A controller that could not set its first rules is the seed's failure, with what it printed (its termination
// message, else its previous log: '' when neither could be read). The kubelet may count a restart before it fills the
// container's last state in (seen on the local cluster: restartCount 1, lastState {}).

const status = (s: Partial<V1ContainerStatus>): V1ContainerStatus => ({ name: 'egress', image: 'i', imageID: '', ready: false, restartCount: 0, ...s });

describe('the egress controller\'s start failure', () => {
  it.each([
    ['never restarted', { restartCount: 0 }, '', null],
    ['its termination message', { restartCount: 1, lastState: { terminated: { exitCode: 137, message: 'xtables: not found\n' } } }, 'xtables: not found', /could not set its network: xtables: not found$/],
    ['its previous log', { restartCount: 1, lastState: { terminated: { exitCode: 1 } } }, 'no iptables', /could not set its network: no iptables$/],
    ['restarted, last state not filled in yet, no log: not yet', { restartCount: 1, lastState: {} }, '', null],
    ['the same on the third restart: reported', { restartCount: 3, lastState: {} }, '', /could not set its network: no output$/],
  ] as const)('%s', (_what, s, log, want) => {
    const got = controllerStartFailure('p', status(s as Partial<V1ContainerStatus>), log);
    if (want === null) expect(got).toBeNull();
    else expect(got?.message).toMatch(want);
  });
});
