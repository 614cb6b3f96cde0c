import { describe, expect, it } from 'vitest';
import { hardPods, scopeTag } from '../../src/sandbox/kubernetes/slot-leases.ts';

// The pure rules of the slots kept as Leases (issue 23, "Scheduling and slots"; docs/kubernetes.md, Sandbox queues on Kubernetes).
describe('slot leases: the pods a quota bounds, the tag of a queue', () => {
  it.each([
    [undefined, undefined],
    [{}, undefined],
    [{ cpu: '4' }, undefined],
    [{ pods: '10' }, 10],
    [{ 'count/pods': '3' }, 3],
    [{ pods: '5', 'count/pods': '3' }, 5],
  ])('hard %j bounds %j pods', (hard, want) => {
    expect(hardPods(hard)).toBe(want);
  });

  it.each([
    ['berth-host-kuberneteshttps12700116443default'],
    [`berth-host-${'x'.repeat(300)}`],
  ])('the tag of %j is a 12-hex label value, the same every time, and differs between queues', (queue) => {
    expect(scopeTag(queue)).toMatch(/^[0-9a-f]{12}$/);
    expect(scopeTag(queue)).toBe(scopeTag(queue));
    expect(scopeTag(queue)).not.toBe(scopeTag(`${queue}-other`));
  });
});
