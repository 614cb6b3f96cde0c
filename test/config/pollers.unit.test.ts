import { describe, expect, it } from 'vitest';
import { withoutGoneLocal, type Poller } from '../../src/config/pollers.ts';

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
