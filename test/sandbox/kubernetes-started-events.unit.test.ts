import { describe, expect, it } from 'vitest';
import { startedContainer } from '../../src/sandbox/kubernetes/started-events.ts';

// A pod's container is asked over exec once the kubelet's `Started` event for it came (docs/kubernetes.md, Benchmark):
// which pod and container an event names.

describe('the container a kubelet Started event is about', () => {
  it.each<[string, { reason?: string; involvedObject: { kind?: string; uid?: string; fieldPath?: string } }, { uid: string; container: string } | undefined]>([
    ['main of a sandbox pod', { reason: 'Started', involvedObject: { kind: 'Pod', uid: 'u-1', fieldPath: 'spec.containers{main}' } }, { uid: 'u-1', container: 'main' }],
    ['an init container (the egress controller)', { reason: 'Started', involvedObject: { kind: 'Pod', uid: 'u-2', fieldPath: 'spec.initContainers{egress}' } }, { uid: 'u-2', container: 'egress' }],
    ['Created, not yet Started', { reason: 'Created', involvedObject: { kind: 'Pod', uid: 'u-1', fieldPath: 'spec.containers{main}' } }, undefined],
    ['a pod-level event (no container)', { reason: 'Started', involvedObject: { kind: 'Pod', uid: 'u-1' } }, undefined],
    ['another kind of object', { reason: 'Started', involvedObject: { kind: 'Node', uid: 'n-1', fieldPath: 'spec.containers{main}' } }, undefined],
    ['no uid', { reason: 'Started', involvedObject: { kind: 'Pod', fieldPath: 'spec.containers{main}' } }, undefined],
  ])('%s', (_what, event, expected) => {
    expect(startedContainer(event)).toEqual(expected);
  });
});
