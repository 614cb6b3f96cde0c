// The egress proxy (docs/design.md section 7, Network): an allowlist admits a host, a `*.host` wildcard, an IP or a
// CIDR range (Harbor 0.25), through CONNECT and plain forwarding; anything else is refused.
// Real sockets on this machine's loopback; the "sandbox" is this process, registered under 127.0.0.1.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync } from 'node:fs';
import { createServer, request, type Server } from 'node:http';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { admit, compileAllowlist } from '../../src/sandbox/egress-allow.ts';
import { EgressPolicies, EgressProxy } from '../../src/sandbox/egress-proxy.ts';

describe('allowlist matching', () => {
  const fakeDns = async (host: string) => (host === 'inside.test' ? [{ address: '10.1.2.3', family: 4 }] : [{ address: '192.0.2.9', family: 4 }]);
  const rows: Array<[string[], string, string | null]> = [
    [['example.com'], 'example.com', 'example.com'],
    [['example.com'], 'EXAMPLE.com.', 'example.com'],
    [['example.com'], 'api.example.com', null],
    [['*.example.com'], 'api.example.com', 'api.example.com'],
    [['*.example.com'], 'a.b.example.com', 'a.b.example.com'],
    [['*.example.com'], 'example.com', null],
    [['*.example.com'], 'badexample.com', null],
    [['10.0.0.7'], '10.0.0.7', '10.0.0.7'],
    [['10.0.0.7'], '10.0.0.8', null],
    [['10.0.0.0/8'], '10.200.1.1', '10.200.1.1'],
    [['10.0.0.0/8'], '11.0.0.1', null],
    [['10.0.0.0/8'], 'inside.test', '10.1.2.3'],
    [['10.0.0.0/8'], 'outside.test', null],
    [['2001:db8::/32'], '[2001:db8::5]', '2001:db8::5'],
    [[], 'example.com', null],
  ];
  it.each(rows)('%j admits %s → %s', async (entries, host, want) => {
    expect(await admit(compileAllowlist(entries), host, fakeDns as never)).toBe(want);
  });
});

describe('the proxy', () => {
  let upstream: Server;
  let upstreamPort = 0;
  let proxy: EgressProxy;
  let proxyPort = 0;
  const policies = new EgressPolicies(mkdtempSync(join(tmpdir(), 'berth-egress-')));
  const dir = mkdtempSync(join(tmpdir(), 'berth-egress-port-'));
  let owner = 'c1';

  beforeAll(async () => {
    upstream = createServer((req, res) => res.end(`hello ${req.url}`));
    await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
    upstreamPort = (upstream.address() as { port: number }).port;
    proxy = new EgressProxy({ host: '127.0.0.1', portFile: join(dir, 'port'), policies, owns: async (_ip, c) => c === owner });
    proxyPort = Number(new URL(await proxy.start()).port);
  });
  afterAll(async () => {
    await proxy.close();
    await new Promise<void>((r) => upstream.close(() => r()));
  });

  const get = (host: string) => new Promise<{ status: number; body: string }>((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: proxyPort, path: `http://${host}:${upstreamPort}/x`, headers: { host: `${host}:${upstreamPort}` } }, (res) => {
      let body = '';
      res.on('data', (d) => { body += d; });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
  const tunnel = (host: string) => new Promise<string>((resolve, reject) => {
    const s = connect(proxyPort, '127.0.0.1', () => s.write(`CONNECT ${host}:${upstreamPort} HTTP/1.1\r\nHost: ${host}:${upstreamPort}\r\n\r\n`));
    let text = '';
    s.on('data', (d) => {
      text += d;
      if (text.includes('\r\n\r\n') && text.startsWith('HTTP/1.1 200')) {
        s.write(`GET /t HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
      }
    });
    s.on('end', () => resolve(text));
    s.on('error', reject);
  });

  it('refuses a sandbox with no registered phase', async () => {
    expect((await get('127.0.0.1')).status).toBe(403);
  });

  it('forwards and tunnels to an admitted address; refuses another', async () => {
    policies.set('127.0.0.1', { container: 'c1', hosts: ['127.0.0.1'] });
    expect(await get('127.0.0.1')).toEqual({ status: 200, body: 'hello /x' });
    expect(await tunnel('127.0.0.1')).toContain('hello /t');
    policies.set('127.0.0.1', { container: 'c1', hosts: ['10.9.9.9'] });
    expect((await get('127.0.0.1')).status).toBe(403);
    expect(await tunnel('127.0.0.1')).toMatch(/^HTTP\/1\.1 403/);
  });

  it('a public phase of an allowlist sandbox admits everything', async () => {
    policies.set('127.0.0.1', { container: 'c1', hosts: null });
    expect((await get('127.0.0.1')).status).toBe(200);
  });

  it('a policy whose container no longer holds the address is ignored (an address reused by a newer sandbox)', async () => {
    policies.set('127.0.0.1', { container: 'c-old', hosts: null });
    expect((await get('127.0.0.1')).status).toBe(403);
    owner = 'c-old';
  });

  it('a second proxy for the same port file serves the same port once the first has gone (a restarted worker)', async () => {
    const again = new EgressProxy({ host: '127.0.0.1', portFile: join(dir, 'port'), policies, owns: async () => true, retryMs: 50 });
    expect(await again.start()).toBe(`http://127.0.0.1:${proxyPort}`);
    expect(again.serving).toBe(false);
    await proxy.close();
    await new Promise((r) => setTimeout(r, 300));
    expect(again.serving).toBe(true);
    policies.set('127.0.0.1', { container: 'c-old', hosts: ['127.0.0.1'] });
    expect((await get('127.0.0.1')).status).toBe(200);
    proxy = again;
  });
});
