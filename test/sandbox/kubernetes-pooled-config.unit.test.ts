import { describe, expect, it } from 'vitest';
import type https from 'node:https';
import type tls from 'node:tls';
import { PooledKubeConfig, tlsOptionsKey } from '../../src/sandbox/kubernetes/pooled-config.ts';

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

// Exec and watch streams each open a TLS connection: they share one TLS context, so the CA, certificate and key are
// parsed once, not per exec (about 6 ms of the worker's CPU each).
describe('the TLS context of exec and watch streams', () => {
  const config = (server: string) => {
    const kc = new PooledKubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'c', server, skipTLSVerify: false, caData: undefined }],
      users: [{ name: 'u', token: 't' }],
      contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
      currentContext: 'x',
    });
    return kc;
  };
  const contextOf = async (kc: PooledKubeConfig) => {
    const opts: https.RequestOptions = {};
    await kc.applyToHTTPSOptions(opts);
    return (opts as tls.ConnectionOptions).secureContext;
  };

  it('is made once and given to every stream', async () => {
    const kc = config('https://127.0.0.1:6443');
    const first = await contextOf(kc);
    expect(first).toBeInstanceOf(Object);
    expect(await contextOf(kc)).toBe(first);
  });

  it('is not shared with another configuration', async () => {
    expect(await contextOf(config('https://127.0.0.1:6443'))).not.toBe(await contextOf(config('https://127.0.0.1:6443')));
  });
});
