import { describe, expect, it } from 'vitest';
import { recentPollers, withoutGoneLocal, type Poller } from '../../src/config/pollers.ts';

const at = new Date(0);
const poller = (identity: string): Poller => ({ identity, lastAccess: at });

// Temporal keeps a dead worker's poller for about a minute; a starting worker's "other workers share this host" line
// must not count one of this machine's that was just killed.
describe('withoutGoneLocal', () => {
  const running = new Set([100]);
  const cases: Array<{ case: string; identity: string; kept: boolean }> = [
    { case: 'a running process of this machine', identity: '100@vm', kept: true },
    { case: 'a gone process of this machine', identity: '200@vm', kept: false },
    { case: 'another machine (only it can tell)', identity: '200@other', kept: true },
    { case: 'an identity not of the SDK default form', identity: 'my-worker', kept: true },
    { case: 'a pid that is not a number', identity: 'x@vm', kept: true },
  ];
  it.each(cases)('$case', ({ identity, kept }) => {
    expect(withoutGoneLocal([poller(identity)], (pid) => running.has(pid), 'vm')).toEqual(kept ? [poller(identity)] : []);
  });
});

// A regrade asks whether the host that ran an attempt still has a worker: one whose last poll is over a minute old has not.
describe('recentPollers', () => {
  const now = 1_000_000_000;
  const cases: Array<{ case: string; pollers: Parameters<typeof recentPollers>[0]; identities: string[] }> = [
    { case: 'none listed', pollers: undefined, identities: [] },
    { case: 'a poll 5 s ago', pollers: [{ identity: '1@a', lastAccessTime: { seconds: now / 1000 - 5 } }], identities: ['1@a'] },
    { case: 'a poll 71 s ago', pollers: [{ identity: '1@a', lastAccessTime: { seconds: now / 1000 - 71 } }], identities: [] },
    { case: 'no time of access', pollers: [{ identity: '1@a' }], identities: [] },
    { case: 'no identity', pollers: [{ lastAccessTime: { seconds: now / 1000 } }], identities: ['?'] },
    {
      case: 'one live, one gone', identities: ['2@b'],
      pollers: [{ identity: '1@a', lastAccessTime: { seconds: now / 1000 - 300 } }, { identity: '2@b', lastAccessTime: { seconds: now / 1000 - 30 } }],
    },
  ];
  it.each(cases)('$case', ({ pollers, identities }) => {
    expect(recentPollers(pollers, now).map((p) => p.identity)).toEqual(identities);
  });
});
