import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { RemovalJournal } from '../../src/activities/removal-journal.ts';
import { Remover } from '../../src/activities/remover.ts';
import { Slots } from '../../src/activities/slots.ts';

const journal = () => new RemovalJournal(mkdtempSync(join(tmpdir(), 'berth-removals-')));

/** A fake engine: each name fails `failures[name]` times, then is removed; `hold` keeps removals waiting. */
function engine(failures: Record<string, number> = {}) {
  const calls: string[] = [];
  const removed = new Set<string>();
  let open: () => void = () => undefined;
  let gate: Promise<void> | undefined;
  return {
    calls, removed,
    hold() { gate = new Promise((r) => { open = r; }); },
    release() { open(); gate = undefined; },
    async remove(name: string) {
      calls.push(name);
      await gate;
      if ((failures[name] ?? 0) > 0) {
        failures[name]!--;
        throw new Error('engine busy');
      }
      removed.add(name);
    },
  };
}

const fast = { firstDelayMs: 1, maxDelayMs: 4 };

describe('Remover', () => {
  it.each<{ case: string; failures: Record<string, number>; attempts: number; warnings: number }>([
    { case: 'removes at the first try', failures: {}, attempts: 2, warnings: 0 },
    { case: 'retries a transient failure', failures: { a: 1 }, attempts: 3, warnings: 0 },
    { case: 'warns once when failures go on, and still removes', failures: { a: 5, b: 2 }, attempts: 9, warnings: 1 },
  ])('$case, and runs done only after every name is gone', async ({ failures, attempts, warnings }) => {
    const docker = engine({ ...failures });
    const warned: string[] = [];
    const remover = new Remover({ remove: docker.remove, journal: journal(), ...fast, warn: (m) => warned.push(m) });
    let doneSaw: string[] | undefined;
    remover.schedule('ep/run', ['a', 'b'], () => { doneSaw = [...docker.removed].sort(); });
    expect(doneSaw).toBeUndefined();
    expect(await remover.drain(5_000)).toBe(0);
    expect(doneSaw).toEqual(['a', 'b']);
    expect(docker.calls).toHaveLength(attempts);
    expect(warned).toHaveLength(warnings);
    if (warnings) expect(warned[0]).toMatch(/removing sandbox a failed 3 times \(engine busy\)/);
  });

  it('returns before the engine answers, and a second schedule of a pending key removes nothing twice', async () => {
    const docker = engine();
    docker.hold();
    const remover = new Remover({ remove: docker.remove, journal: journal(), ...fast });
    const done: number[] = [];
    remover.schedule('ep/run', ['a'], () => done.push(1));
    remover.schedule('ep/run', ['a'], () => done.push(2));
    await new Promise((r) => setTimeout(r, 20));
    expect(remover.size).toBe(1);
    expect(done).toEqual([]);
    docker.release();
    await remover.drain(5_000);
    expect(docker.calls).toEqual(['a']);
    expect(done).toEqual([1, 2]);
  });

  it('keeps a journal entry until the removal is done; a new process resumes what a dead one left', async () => {
    const j = journal();
    const dead = engine();
    dead.hold(); // the process dies with this removal pending
    new Remover({ remove: dead.remove, journal: j, ...fast }).schedule('ep/run', ['a', 'b']);
    expect(j.entries()).toEqual([{ key: 'ep/run', names: ['a', 'b'] }]);

    const next = engine();
    const remover = new Remover({ remove: next.remove, journal: j, ...fast });
    expect(remover.resume()).toBe(1);
    await remover.drain(5_000);
    expect([...next.removed].sort()).toEqual(['a', 'b']);
    expect(j.entries()).toEqual([]);
  });

  it('drain gives up after its bound and says how many are still pending', async () => {
    const docker = engine();
    docker.hold();
    const remover = new Remover({ remove: docker.remove, journal: journal(), ...fast });
    remover.schedule('x/1', ['a']);
    remover.schedule('y/1', ['b']);
    const started = Date.now();
    expect(await remover.drain(100)).toBe(2);
    expect(Date.now() - started).toBeLessThan(2_000);
    docker.release();
    expect(await remover.drain(5_000)).toBe(0);
  });
});

describe('Slots', () => {
  const steps = [
    { case: 'reserving is idempotent per episode', run: (s: Slots) => [s.tryReserve('a'), s.tryReserve('a'), s.inUse], expected: [true, true, 1] },
    { case: 'a full worker refuses', run: (s: Slots) => [s.tryReserve('a'), s.tryReserve('b'), s.tryReserve('c'), s.inUse], expected: [true, true, false, 2] },
    {
      case: 'a vacated slot stays taken until freed',
      run: (s: Slots) => { s.tryReserve('a'); s.tryReserve('b'); const free = s.vacate('a'); const before = [s.inUse, s.tryReserve('c')]; free(); return [...before, s.inUse, s.tryReserve('c')]; },
      expected: [2, false, 1, true],
    },
    {
      case: 'freeing twice frees once',
      run: (s: Slots) => { s.tryReserve('a'); s.tryReserve('b'); const free = s.vacate('a'); free(); free(); return [s.inUse]; },
      expected: [1],
    },
    {
      case: 'vacating an episode twice, or one holding no slot, frees nothing more',
      run: (s: Slots) => { s.tryReserve('a'); const free = s.vacate('a'); s.vacate('a')(); s.vacate('z')(); const mid = s.inUse; free(); return [mid, s.inUse]; },
      expected: [1, 0],
    },
    {
      case: 'a Reset run of the same workflow reserves its own slot while the old one is leaving',
      run: (s: Slots) => { s.tryReserve('a'); const free = s.vacate('a'); const again = s.tryReserve('a'); free(); return [again, s.inUse, s.tryReserve('b'), s.tryReserve('c')]; },
      expected: [true, 1, true, false],
    },
  ];
  it.each(steps)('$case', ({ run, expected }) => {
    expect(run(new Slots(2))).toEqual(expected);
  });
});

describe('waiting for a slot', () => {
  it('nextFree resolves when a removal frees a slot, not before', async () => {
    const s = new Slots(1);
    s.tryReserve('a');
    const free = s.vacate('a');
    let woken = false;
    const waiting = s.nextFree().then(() => { woken = true; });
    await new Promise((r) => setTimeout(r, 20));
    expect(woken).toBe(false);
    free();
    await waiting;
    expect(woken).toBe(true);
    expect(s.tryReserve('b')).toBe(true);
  });
});
