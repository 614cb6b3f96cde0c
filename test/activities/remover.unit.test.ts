import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { RemovalJournal } from '../../src/host/removal-journal.ts';
import { Remover } from '../../src/host/remover.ts';
import { HostSlots } from '../../src/host/slots.ts';
import { reconcileSlots } from '../../src/host/slot-reconcile.ts';

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

// docs/design.md section 7, Slots: a host's slots live in one file that every worker process on the host shares.
describe('HostSlots', () => {
  const file = () => join(mkdtempSync(join(tmpdir(), 'berth-slots-')), 'berth-host-x.json');
  const steps: Array<{ case: string; run: (s: HostSlots, other: HostSlots) => Promise<unknown[]>; expected: unknown[] }> = [
    { case: 'reserving is idempotent per episode', run: async (s) => [await s.tryReserve('a', 'r'), await s.tryReserve('a', 'r'), s.inUse], expected: [true, true, 1] },
    { case: 'a full host refuses', run: async (s) => [await s.tryReserve('a', 'r'), await s.tryReserve('b', 'r'), await s.tryReserve('c', 'r'), s.inUse], expected: [true, true, false, 2] },
    {
      case: 'a slot reserved by one process is freed by another, once its sandboxes are gone',
      run: async (s, other) => {
        await s.tryReserve('a', 'r'); await s.tryReserve('b', 'r');
        const key = await other.vacate('a', 'r', ['n']);
        const before = [s.inUse, await s.tryReserve('c', 'r')];
        await other.free(key!);
        return [...before, s.inUse, await s.tryReserve('c', 'r')];
      },
      expected: [2, false, 1, true],
    },
    {
      case: 'freeing twice frees once; vacating twice, or an episode holding no slot, frees nothing more',
      run: async (s) => {
        await s.tryReserve('a', 'r'); await s.tryReserve('b', 'r');
        const key = await s.vacate('a', 'r', []);
        const again = await s.vacate('a', 'r', []);
        const none = await s.vacate('z', 'r', []);
        await s.free(key!); await s.free(key!);
        return [again === key, none, s.inUse];
      },
      expected: [true, undefined, 1],
    },
    {
      case: 'a Reset run of the same workflow reserves its own slot while the old one is leaving',
      run: async (s) => {
        await s.tryReserve('a', 'r1');
        const key = await s.vacate('a', 'r1', []);
        const again = await s.tryReserve('a', 'r2');
        await s.free(key!);
        return [again, s.inUse, await s.tryReserve('b', 'r'), await s.tryReserve('c', 'r')];
      },
      expected: [true, 1, true, false],
    },
    {
      case: 'a seed whose slot was freed meanwhile takes it again, past the capacity',
      run: async (s) => { await s.tryReserve('a', 'r'); await s.tryReserve('b', 'r'); await s.free('a'); await s.tryReserve('c', 'r'); await s.seeded('a', 'r'); return [s.inUse]; },
      expected: [3],
    },
    {
      // Issue 25 (the warm pool): a worker killed between a claim and its rename must not leak the pooled sandbox.
      case: "a pooled sandbox being claimed is named in the claiming episode's lease until the claim ends, and goes with its teardown",
      run: async (s, other) => {
        await s.tryReserve('a', 'r');
        await s.reservePool({ name: 'berth-pool-1', key: 'k', task: 'd', owner: 'o' });
        const taken = await s.takePool('berth-pool-1', 'a');
        const during = [s.inUse, other.leases().find((l) => l.key === 'a')?.pooled];
        const names: string[] = ['berth-a'];
        await other.vacate('a', 'r', names);
        return [taken, ...during, names];
      },
      expected: [true, 1, 'berth-pool-1', ['berth-a', 'berth-pool-1']],
    },
    {
      case: 'a finished claim leaves nothing named in the lease; a pool slot already taken is not taken twice',
      run: async (s) => {
        await s.tryReserve('a', 'r');
        await s.reservePool({ name: 'berth-pool-1', key: 'k', task: 'd', owner: 'o' });
        await s.takePool('berth-pool-1', 'a');
        const ended = await s.takePooled('a');
        return [ended, await s.takePooled('a'), await s.takePool('berth-pool-1', 'a'), s.leases().find((l) => l.key === 'a')?.pooled];
      },
      expected: ['berth-pool-1', undefined, false, undefined],
    },
    {
      // The CI failure of seed-image's pool mode: a full host handed episode 1 the sandbox seeded for episode 2 (of
      // the same task), which episode 1's seed removed as not its own, and episode 2 then found its own gone.
      case: 'on a full host, an episode takes over the pooled sandbox seeded for it, not the one seeded for the next episode of its task',
      run: async (s) => {
        await s.reservePool({ name: 'berth-pool-2', key: 'k', task: 'd', owner: 'o', for: 'ep-2' });
        await s.reservePool({ name: 'berth-pool-1', key: 'k', task: 'd', owner: 'o', for: 'ep-1' });
        const reserved = await s.tryReserve('ep-1', 'r', 'd');
        return [reserved, await s.takePooled('ep-1'), s.leases().map((l) => l.pool?.name ?? l.key)];
      },
      expected: [true, 'berth-pool-1', ['berth-pool-2', 'ep-1']],
    },
  ];
  it.each(steps)('$case', async ({ run, expected }) => {
    const f = file();
    expect(await run(new HostSlots(f, 2), new HostSlots(f, 2))).toEqual(expected);
  });

  it('many reservations at once never go past the capacity', async () => {
    const f = file();
    const views = Array.from({ length: 4 }, () => new HostSlots(f, 5));
    const got = await Promise.all(Array.from({ length: 40 }, (_, i) => views[i % 4]!.tryReserve(`e${i}`, 'r')));
    expect(got.filter(Boolean)).toHaveLength(5);
    expect(views[0]!.inUse).toBe(5);
  });

  it('a waiter is woken when another view frees a slot, well before its bounded wait ends', async () => {
    const f = file();
    const [a, b] = [new HostSlots(f, 1), new HostSlots(f, 1)];
    await a.tryReserve('x', 'r');
    const started = Date.now();
    const woken = b.changed(10_000);
    setTimeout(() => void a.free('x'), 50);
    await woken;
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(await b.tryReserve('y', 'r')).toBe(true);
    a.close(); b.close();
  });
});

describe('reconcileSlots', () => {
  const t0 = 1_000_000_000;
  const setup = async (leases: Array<{ id: string; at: number; seeded?: boolean; leaving?: number }>) => {
    const slots = new HostSlots(join(mkdtempSync(join(tmpdir(), 'berth-slots-')), 'q.json'), 10);
    for (const l of leases) {
      await slots.tryReserve(l.id, 'r');
      if (l.seeded) await slots.seeded(l.id, 'r');
      if (l.leaving !== undefined) await slots.vacate(l.id, 'r', [`${l.id}-box`]);
    }
    const file = JSON.parse(readFileSync(slots.file, 'utf8')) as { leases: Array<{ workflowId: string; at: number; leaving?: number }> };
    for (const l of file.leases) {
      const want = leases.find((x) => x.id === l.workflowId)!;
      l.at = want.at;
      if (l.leaving !== undefined) l.leaving = want.leaving;
    }
    writeFileSync(slots.file, JSON.stringify(file));
    const scheduled: string[] = [];
    const remover = { schedule: (key: string, _names: readonly string[], done: () => void = () => undefined) => { scheduled.push(key); done(); }, has: () => false };
    return { slots, scheduled, remover };
  };

  it.each([
    { case: 'a young lease is left alone, even of a closed episode', lease: { id: 'a', at: t0 - 5_000 }, open: false, left: 1, scheduled: 0 },
    { case: 'a closed episode\'s slot: its sandboxes are removed, then it is freed', lease: { id: 'a', at: t0 - 60_000, seeded: true }, open: false, left: 0, scheduled: 1 },
    { case: 'a running, seeded episode keeps its slot', lease: { id: 'a', at: t0 - 3_600_000, seeded: true }, open: true, left: 1, scheduled: 0 },
    { case: 'reserved and never seeded within the bound: freed', lease: { id: 'a', at: t0 - 700_000 }, open: true, left: 0, scheduled: 0 },
    { case: 'reserved, not yet seeded, within the bound: kept', lease: { id: 'a', at: t0 - 100_000 }, open: true, left: 1, scheduled: 0 },
    { case: 'leaving for long with no remover here: removed and freed', lease: { id: 'a', at: t0 - 600_000, seeded: true, leaving: t0 - 120_000 }, open: false, left: 0, scheduled: 1 },
    { case: 'leaving, recently: left to its remover', lease: { id: 'a', at: t0 - 600_000, seeded: true, leaving: t0 - 10_000 }, open: false, left: 1, scheduled: 0 },
  ])('$case', async ({ lease, open, left, scheduled }) => {
    const s = await setup([lease]);
    await reconcileSlots({ slots: s.slots, remover: s.remover, isOpen: async () => open, seedBoundMs: 600_000, now: () => t0 });
    await new Promise((r) => setTimeout(r, 50));
    expect(s.slots.inUse).toBe(left);
    expect(s.scheduled).toHaveLength(scheduled);
  });

  it('keeps the slot when Temporal cannot be asked', async () => {
    const s = await setup([{ id: 'a', at: t0 - 700_000, seeded: true }]);
    await reconcileSlots({ slots: s.slots, remover: s.remover, isOpen: async () => { throw new Error('unreachable'); }, seedBoundMs: 1, now: () => t0 });
    expect(s.slots.inUse).toBe(1);
  });
});
