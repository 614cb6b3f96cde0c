import { describe, expect, it } from 'vitest';
import { tlsOptionsKey } from '../../src/sandbox/kubernetes/pooled-config.ts';

// Two agents' connections are interchangeable only with the same CA, client certificate and key, verification and
// server name: a rotated certificate gets a new pooled agent.

describe('tlsOptionsKey', () => {
  const base = { ca: Buffer.from('ca'), cert: Buffer.from('cert'), key: Buffer.from('key') };
  const cases: Array<{ name: string; other: Record<string, unknown>; same: boolean }> = [
    { name: 'the same options, new buffers', other: { ca: Buffer.from('ca'), cert: Buffer.from('cert'), key: Buffer.from('key') }, same: true },
    { name: 'a timeout only', other: { ...base, timeout: 5000 }, same: true },
    { name: 'a rotated certificate', other: { ...base, cert: Buffer.from('cert2') }, same: false },
    { name: 'another key', other: { ...base, key: Buffer.from('key2') }, same: false },
    { name: 'another CA', other: { ...base, ca: [Buffer.from('ca'), Buffer.from('ca2')] }, same: false },
    { name: 'verification off', other: { ...base, rejectUnauthorized: false }, same: false },
    { name: 'another server name', other: { ...base, servername: 'api.example' }, same: false },
  ];
  for (const c of cases) {
    it(c.name, () => {
      expect(tlsOptionsKey(c.other) === tlsOptionsKey(base)).toBe(c.same);
    });
  }
});
