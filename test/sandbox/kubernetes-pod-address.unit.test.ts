import type { V1Pod } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { podWithAddress } from '../../src/sandbox/kubernetes/pod-address.ts';

// A pod seen ready by exec may not have its IP in its status yet (the kubelet writes it at a relist): the reads go on
// until it does, within the bound, and a pod that is gone, ending or ended is answered as it is.

const pod = (status: V1Pod['status'], deleting = false): V1Pod => ({ metadata: { name: 'p', ...(deleting ? { deletionTimestamp: new Date() } : {}) }, status });
const withIp = pod({ phase: 'Running', podIP: '10.229.0.7' });
const noIp = pod({ phase: 'Pending' });

describe('podWithAddress', () => {
  const cases: Array<{ name: string; reads: Array<V1Pod | undefined>; waitMs?: number; ip: string | undefined; gone?: true; readsMade: number | [number, number] }> = [
    { name: 'an IP at the first read', reads: [withIp], ip: '10.229.0.7', readsMade: 1 },
    { name: 'no IP for two reads, then one', reads: [noIp, noIp, withIp], ip: '10.229.0.7', readsMade: 3 },
    { name: 'a pod that is gone', reads: [undefined], ip: undefined, gone: true, readsMade: 1 },
    { name: 'a pod being deleted, without an IP', reads: [pod({ phase: 'Running' }, true)], ip: undefined, readsMade: 1 },
    { name: 'a pod that ended', reads: [pod({ phase: 'Failed' })], ip: undefined, readsMade: 1 },
    { name: 'still no IP when the bound is spent', reads: [noIp, noIp, noIp, noIp, noIp, noIp, noIp, noIp], waitMs: 250, ip: undefined, readsMade: [2, 4] },
  ];
  for (const c of cases) {
    it(c.name, async () => {
      let made = 0;
      const read = () => Promise.resolve(c.reads[Math.min(made++, c.reads.length - 1)]);
      const got = await podWithAddress(read, c.waitMs ?? 5000);
      expect(got === undefined).toBe(Boolean(c.gone));
      expect(got?.status?.podIP).toBe(c.ip);
      if (Array.isArray(c.readsMade)) {
        expect(made).toBeGreaterThanOrEqual(c.readsMade[0]);
        expect(made).toBeLessThanOrEqual(c.readsMade[1]);
      } else expect(made).toBe(c.readsMade);
    });
  }
});
