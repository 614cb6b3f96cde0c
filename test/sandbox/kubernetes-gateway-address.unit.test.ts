import { describe, expect, it } from 'vitest';
import { gatewayListenAddress, localAddresses, type GatewayPlace } from '../../src/sandbox/kubernetes/gateway-address.ts';

// Where the worker's model gateway listens for pods (issue 23: installed agents on Kubernetes; docs/design.md section 5,
// "The model gateway": each worker serves it on the address its sandboxes reach).

const node = (internal: string, extra: Array<{ type: string; address: string }> = []) => [{ type: 'InternalIP', address: internal }, { type: 'Hostname', address: 'n' }, ...extra];

describe('the address the model gateway listens on for pods', () => {
  it.each<[string, GatewayPlace, string | RegExp]>([
    ['a worker on the node: the node\'s InternalIP', { local: ['192.168.1.5', '10.229.255.1'], nodes: [node('10.229.255.1')], inCluster: false }, '10.229.255.1'],
    ['the node of this machine among several', { local: ['10.0.0.12'], nodes: [node('10.0.0.11'), node('10.0.0.12')], inCluster: false }, '10.0.0.12'],
    ['an ExternalIP of this machine is not where pods are routed', { local: ['203.0.113.9'], nodes: [node('10.0.0.11', [{ type: 'ExternalIP', address: '203.0.113.9' }])], inCluster: false },
      /not one of the cluster's nodes \(10\.0\.0\.11\).*BERTH_GATEWAY_HOST/],
    ['a worker in a pod: its pod IP', { local: ['10.244.1.7'], nodes: [node('10.0.0.11')], inCluster: true }, '10.244.1.7'],
    ['a worker in a pod whose role may not list nodes', { local: ['10.244.1.7'], nodes: [], inCluster: true }, '10.244.1.7'],
    ['a worker in a pod on the host network: the node address', { local: ['10.0.0.11'], nodes: [node('10.0.0.11')], inCluster: true }, '10.0.0.11'],
    ['a laptop beside a remote cluster: refused with the fix', { local: ['192.168.1.5'], nodes: [node('10.0.0.11')], inCluster: false },
      /this machine \(192\.168\.1\.5\) is not one of the cluster's nodes \(10\.0\.0\.11\) and not a pod of it; set BERTH_GATEWAY_HOST/],
    ['no address at all', { local: [], nodes: [], inCluster: true }, /no IPv4 address.*none listed.*BERTH_GATEWAY_HOST/],
  ])('%s', (_what, place, want) => {
    const got = gatewayListenAddress(place);
    if (typeof want === 'string') expect(got).toBe(want);
    else {
      expect(got).toBeInstanceOf(Error);
      expect((got as Error).message).toMatch(want);
    }
  });

  it('lists this machine\'s IPv4 addresses without loopback', () => {
    const got = localAddresses();
    expect(got.every((a) => /^\d+\.\d+\.\d+\.\d+$/.test(a) && !a.startsWith('127.'))).toBe(true);
  });
});
