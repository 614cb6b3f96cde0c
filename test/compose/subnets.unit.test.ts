import { describe, expect, it } from 'vitest';
import {
  enginePoolNetworks, formatCidr, gatewayOf, overlaps, parseCidr, parseProcRoutes, pickSubnet, poolCapacity, startIndexFor,
} from '../../src/sandbox/docker/subnets.ts';
import { subnetSource } from '../../src/sandbox/docker/group-network.ts';

const c = parseCidr;

describe('parseCidr and formatCidr', () => {
  it.each(['10.213.0.0/16', '0.0.0.0/0', '192.168.4.0/22', '255.255.255.255/32', '172.16.0.0/12'])('%s round-trips', (text) => {
    expect(formatCidr(parseCidr(text))).toBe(text);
  });

  it.each([
    ['10.213.0.0', 'not an IPv4 range'],
    ['10.213.0.0/33', 'not an IPv4 range'],
    ['300.1.1.1/8', 'not an IPv4 range'],
    ['fd00::/8', 'not an IPv4 range'],
    ['10.213.1.0/16', 'host bits set: write the range\'s first address, for example 10.213.0.0/16'],
  ])('%s is refused with the fix', (text, message) => {
    expect(() => parseCidr(text)).toThrow(message);
  });
});

describe('overlaps', () => {
  it.each([
    ['10.0.0.0/24', '10.0.0.0/24', true],
    ['10.0.0.0/24', '10.0.1.0/24', false],
    ['10.0.0.0/16', '10.0.200.0/24', true],
    ['10.0.200.0/24', '10.0.0.0/16', true],
    ['10.0.0.0/25', '10.0.0.128/25', false],
    ['0.0.0.0/0', '192.168.1.0/24', true],
    ['10.0.0.255/32', '10.0.0.0/24', true],
  ] as const)('%s and %s: %s', (a, b, want) => {
    expect(overlaps(c(a), c(b))).toBe(want);
  });
});

describe('pickSubnet', () => {
  const pool = c('10.213.0.0/16');
  it.each([
    ['first block of an empty pool', [], 0, '10.213.0.0/24'],
    ['starts at the given block', [], 7, '10.213.7.0/24'],
    ['skips a used block', ['10.213.7.0/24'], 7, '10.213.8.0/24'],
    ['skips a wider used range covering several blocks', ['10.213.4.0/22'], 5, '10.213.8.0/24'],
    ['skips a narrower used range inside a block', ['10.213.9.128/25'], 9, '10.213.10.0/24'],
    ['wraps around past the last block', ['10.213.255.0/24'], 255, '10.213.0.0/24'],
    ['a start beyond the capacity wraps', [], 256 + 3, '10.213.3.0/24'],
    ['ignores ranges outside the pool', ['172.17.0.0/16', '192.168.0.0/16'], 0, '10.213.0.0/24'],
  ] as const)('%s', (_what, used, start, want) => {
    const got = pickSubnet({ pool, size: 24, used: used.map(c), start });
    expect(got && formatCidr(got)).toBe(want);
  });

  it('returns null when every block is used', () => {
    expect(pickSubnet({ pool: c('10.213.0.0/23'), size: 24, used: [c('10.213.0.0/24'), c('10.213.1.0/24')], start: 0 })).toBeNull();
    expect(pickSubnet({ pool: c('10.213.0.0/23'), size: 24, used: [c('10.0.0.0/8')], start: 1 })).toBeNull();
  });

  it('hands out 256 distinct /24 blocks of a /16 before running out', () => {
    const used = [];
    for (let i = 0; i < 256; i++) {
      const got = pickSubnet({ pool, size: 24, used, start: startIndexFor(`p${i}`, 256) });
      expect(got).not.toBeNull();
      used.push(got!);
    }
    expect(new Set(used.map(formatCidr)).size).toBe(256);
    expect(pickSubnet({ pool, size: 24, used, start: 0 })).toBeNull();
  });
});

describe('pool arithmetic', () => {
  it.each([
    ['10.213.0.0/16', 24, 256],
    ['10.213.0.0/16', 26, 1024],
    ['10.213.0.0/16', 16, 1],
    ['10.213.0.0/16', 12, 0],
    ['172.16.0.0/12', 24, 4096],
  ] as const)('%s holds %i-bit subnets: %i', (p, size, want) => {
    expect(poolCapacity(c(p), size)).toBe(want);
  });

  it('counts the networks the engine\'s own pools hold (GET /info DefaultAddressPools)', () => {
    expect(enginePoolNetworks(undefined)).toBe(0);
    expect(enginePoolNetworks([{ Base: '172.16.0.0/12', Size: 24 }])).toBe(4096);
    expect(enginePoolNetworks([{ Base: '172.17.0.0/16', Size: 16 }, { Base: '192.168.0.0/16', Size: 20 }, { Base: 'fd00::/8', Size: 64 }])).toBe(17);
  });

  it('gives the gateway Docker would choose', () => {
    expect(gatewayOf(c('10.213.7.0/24'))).toBe('10.213.7.1');
  });

  it('starts different keys at (usually) different blocks, the same key at the same one', () => {
    expect(startIndexFor('a', 256)).toBe(startIndexFor('a', 256));
    expect(new Set(Array.from({ length: 50 }, (_, i) => startIndexFor(`berth-${i}`, 256))).size).toBeGreaterThan(40);
  });
});

describe('parseProcRoutes', () => {
  it('reads destinations and masks, leaving out the default route', () => {
    const text = [
      'Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT',
      'eth0\t00000000\t010200C0\t0003\t0\t0\t0\t00000000\t0\t0\t0',
      'docker0\t000011AC\t00000000\t0001\t0\t0\t0\t0000FFFF\t0\t0\t0',
      'eth0\t000200C0\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0',
    ].join('\n');
    expect(parseProcRoutes(text).map(formatCidr)).toEqual(['172.17.0.0/16', '192.0.2.0/24']);
  });
});

// The variables as src/config/env.ts reads them (subnetSettings), checked by the sandbox.
const fromEnv = (env: Record<string, string>) => subnetSource({ pool: env['BERTH_SUBNET_POOL'], size: env['BERTH_SUBNET_SIZE'] });

describe('subnetSource', () => {
  it.each([
    [{}, { kind: 'auto', pool: '10.213.0.0/16', size: 24 }],
    [{ BERTH_SUBNET_POOL: 'engine' }, { kind: 'engine' }],
    [{ BERTH_SUBNET_POOL: '10.50.0.0/16', BERTH_SUBNET_SIZE: '26' }, { kind: 'range', pool: '10.50.0.0/16', size: 26 }],
  ])('%j', (env, want) => {
    const s = fromEnv(env);
    expect(s.kind === 'engine' ? s : { ...s, pool: formatCidr(s.pool) }).toEqual(want);
  });

  it.each([
    [{ BERTH_SUBNET_POOL: '10.50.0.0' }, 'not an IPv4 range'],
    [{ BERTH_SUBNET_SIZE: '30' }, 'BERTH_SUBNET_SIZE="30": expected a prefix length from 8 to 29'],
    [{ BERTH_SUBNET_POOL: '10.50.0.0/24', BERTH_SUBNET_SIZE: '16' }, 'cannot hold a /16 subnet: widen the range or raise BERTH_SUBNET_SIZE'],
  ])('%j is refused with the fix', (env, message) => {
    expect(() => fromEnv(env)).toThrow(message);
  });
});
