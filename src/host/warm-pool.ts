// A host's warm pool (docs/performance-notes.md, The warm pool): while a batch runs, this worker process seeds a few
// sandboxes ahead for the episodes the batch starts next, so an episode's seed becomes a claim (a rename). Each pooled
// sandbox holds a slot of the host; the pool yields its slots to waiting episodes (HostSlots.tryReserve), drains a
// batch's sandboxes once the batch is closed or paused, and all of them when the worker stops. The janitor and the
// slot reconciler remove what a dead worker's pool left (poolOwnerLive).
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import { randomBytes } from 'node:crypto';
import { batchWorkflowId, UPCOMING_QUERY, UPCOMING_RUNS } from '../config/batch-ids.ts';
import { POOL_NAME_PREFIX, SeedFailed, type SandboxHandle, type SandboxSpec } from '../sandbox/index.ts';
import type { Task } from '../task/index.ts';
import type { NetworkDeps } from './phase-network.ts';
import type { Remover } from './remover.ts';
import { agentSeedSpec, seedAgentFromSpec } from './seed-agent.ts';
import { seedKey } from './seed-key.ts';
import type { HostSlots } from './slots.ts';
import { freeing } from './tear-down.ts';
import type { EpisodeTaskLoader } from './task-loader.ts';
import type { EpisodeInput, PrepareAhead, UpcomingEpisodes } from '../activities/types.ts';
import { aheadEpisodeOf, aheadSeedFate, freshSeedSaid, poolWants, stillUpcoming, surplusFate, upcomingAfterSeed, type AheadEpisode } from './warm-pool-plan.ts';

/** How often the pool looks at the batches it serves (each also looks when an episode seeds here). */
const LOOK_EVERY_MS = 2000;
/** How many (batch, key) pairs sayFresh remembers before it starts over (a worker that runs for months). */
const EXPLAINED_KEPT = 10_000;
/** A sandbox surplus for less than this is kept: an episode just started (so no longer upcoming) may claim it. */
const SURPLUS_GRACE_MS = 10_000;
/**
 * How long a sandbox seeded for one episode is kept once the batch has started that episode and it holds no slot here
 * (its pickHost may not have run yet on a loaded machine): after that it went to another host.
 */
const STARTED_GRACE_MS = 30_000;
/** How long a batch whose tasks were just prepared here may take to start before what was seeded for it goes. */
const AHEAD_START_MS = 30_000;

export interface WarmPoolDeps extends NetworkDeps {
  provider: NetworkDeps['provider'] & Required<Pick<NetworkDeps['provider'], 'rename'>>;
  slots: HostSlots;
  remover: Pick<Remover, 'schedule'>;
  loadEpisodeTask: EpisodeTaskLoader;
  /** This host's sandbox queue, and this process as its pooled sandboxes' owner (poolOwnerTag). */
  queue: string;
  owner: string;
  /** The most sandboxes the pool holds at once (poolCapacity). */
  max: number;
  log(message: string): void;
}

interface Pooled {
  name: string;
  key: string;
  batchId: string;
  at: number;
  /** The seed's end: the sandbox, or undefined when it failed (then it is removed). */
  ready: Promise<SandboxHandle | undefined>;
  /** Set once seeded: only a seeded sandbox is claimed (a claim never waits for a seed that may fail as long). */
  handle?: SandboxHandle;
  claimed?: boolean;
  /** Removed before its seed ended: its failure says nothing of the seed. */
  dropped?: boolean;
  /** Seeded while its batch was starting (serveAhead), for this episode: labelled as its, and claimed by it alone. */
  for?: string;
  /** That episode's place in the batch's start order (to tell from the batch's answer whether it has started). */
  place?: AheadEpisode;
  /** When a look first saw that episode started and holding no slot here (aheadSeedFate). */
  startedSeenAt?: number | undefined;
  /** When a look first saw it surplus (surplusFate), while it stays so. */
  surplusSince?: number | undefined;
  /** Why its seed failed. */
  failure?: Error;
}

/** What seeding one upcoming run needs: its task and the spec its episode's seed would make. */
interface RunSeed {
  key: string | undefined;
  task?: Task;
  spec?: SandboxSpec;
}

interface Served {
  client: Client;
  /** An episode of the batch that seeded here: the batch's settings, with each upcoming run's task put in. */
  base: EpisodeInput;
  /** Served from its tasks' prepare, before it started: its first episodes, until it starts or `until` passes. */
  ahead?: { upcoming: UpcomingEpisodes['upcoming']; episodes: PrepareAhead['episodes']; seededFor: Set<string>; until: number };
  /** What the batch last answered, less the episodes seeded here since (upcomingAfterSeed). */
  last?: { state: UpcomingEpisodes; at: number; whole: boolean };
}

export class WarmPool {
  private pooled: Pooled[] = [];
  private readonly batches = new Map<string, Served>();
  private readonly runs = new Map<string, Promise<RunSeed>>();
  private readonly failedKeys = new Set<string>();
  /** Keys some seed here made: a claim waits for a pooled seed of such a key still under way (it began first). */
  private readonly goodKeys = new Set<string>();
  /** (batch, key) pairs whose fresh seeds the log has explained once (sayFresh); forgotten past EXPLAINED_KEPT. */
  private readonly explained = new Set<string>();
  private timer: NodeJS.Timeout | undefined;
  private looking: Promise<void> | undefined;
  /** A new batch came while a look was under way (which may have read the batches before it): look again after. */
  private lookAgain = false;
  private closed = false;

  constructor(private readonly d: WarmPoolDeps) {}

  /** An episode of this batch seeded here: serve the batch from now on, and look at what it starts next. */
  serve(input: EpisodeInput, client: Client): void {
    if (this.closed || input.episodeSettings.warmPool === false) return;
    const served = this.batches.get(input.batchId);
    if (!served) this.batches.set(input.batchId, { client, base: input });
    this.timer ??= setInterval(() => void this.look({ full: true }), LOOK_EVERY_MS).unref();
    // The batch's answer, less this episode, does for a refill until the timer's next look: asking the batch again
    // for every episode cost the server and the worker a describe and a query each.
    if (served?.last) served.last.state = upcomingAfterSeed(served.last.state, input);
    void this.look({ again: true });
  }

  /**
   * A batch whose tasks were just prepared here, about to start: its first episodes are seeded now, so the first
   * seeds are claims too. If it does not start within AHEAD_START_MS (its client gave up), they are removed.
   */
  serveAhead(ahead: PrepareAhead, client: Client): void {
    const batchId = ahead.first.batchId;
    if (this.closed || ahead.first.episodeSettings.warmPool === false || this.batches.has(batchId)) return;
    this.batches.set(batchId, { client, base: ahead.first, ahead: { upcoming: ahead.upcoming, episodes: ahead.episodes, seededFor: new Set(), until: Date.now() + AHEAD_START_MS } });
    this.timer ??= setInterval(() => void this.look(), LOOK_EVERY_MS).unref();
    void this.look({ again: true });
  }

  /**
   * The episode's sandbox from the pool, renamed to `name`, or undefined (seed it fresh). A pooled sandbox its
   * reservation took over (HostSlots.tryReserve) is claimed when it has the seed's key and removed otherwise.
   */
  async claim(o: { key: string | undefined; workflowId: string; name: string; batchId: string }): Promise<SandboxHandle | undefined> {
    const handed = await this.d.slots.takePooled(o.workflowId);
    if (handed !== undefined) {
      const mine = this.pooled.find((p) => p.name === handed && !p.claimed);
      if (mine && mine.key === o.key && this.claimable(mine) && this.claimableBy(mine, o.workflowId)) return this.take(mine, o.name);
      if (mine) {
        mine.dropped = true;
        this.forget(mine);
      }
      // It sits in the episode's slot: gone before the fresh seed, so the slot never holds two sandboxes.
      await this.d.provider.teardown(handed).catch(() => undefined);
      return undefined;
    }
    if (o.key === undefined) return undefined;
    // A batch prepared here may still be registering the seeds of its first episodes: looked for after, not seeded twice.
    if ([...this.batches.values()].some((b) => b.ahead)) await this.looking;
    for (const p of this.pooled.filter((q) => q.key === o.key && !q.claimed && this.claimable(q) && this.claimableBy(q, o.workflowId))) {
      p.claimed = true;
      if (await this.d.slots.takePool(p.name, o.workflowId)) {
        try {
          return await this.take(p, o.name);
        } finally {
          // Renamed to the episode's name, or removed: no longer the episode's lease's to remove.
          await this.d.slots.takePooled(o.workflowId);
        }
      }
      p.claimed = false;
    }
    this.sayFresh(o.workflowId, o.key, o.batchId);
    return undefined;
  }

  /**
   * Why an episode of a key this pool knows seeds fresh (its log line): the pooled sandboxes of that key and their
   * state, or none; as often as freshSeedSaid says.
   */
  private sayFresh(workflowId: string, key: string, batchId: string): void {
    const mine = this.pooled.filter((p) => p.key === key);
    const once = `${batchId}\0${key}`;
    const seen = mine.map((p) => ({ seeded: p.handle !== undefined, claimed: p.claimed === true, for: p.for }));
    const said = freshSeedSaid({ keyGood: this.goodKeys.has(key), pooled: seen, workflowId, saidBefore: this.explained.has(once) });
    if (said === 'quiet') return;
    if (said === 'say-once') {
      if (this.explained.size >= EXPLAINED_KEPT) this.explained.clear();
      this.explained.add(once);
    }
    const states = mine.map((p) => `${p.name}: ${p.claimed ? 'claimed' : p.handle ? 'seeded' : 'seeding'}${p.for !== undefined ? ` for ${p.for}` : ''}`);
    this.d.log(`warm pool: ${workflowId} seeds fresh; pooled of its key: ${states.length ? states.join(', ') : 'none'}`);
  }

  /** Stops serving and removes every sandbox the pool holds (a stopping worker). */
  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.timer);
    await this.looking;
    // A sandbox still seeding is not waited for: removed now, its seed fails, and what is left the janitor finds.
    for (const p of [...this.pooled]) void this.remove(p);
  }

  /** How many sandboxes the pool holds (seeded or being seeded), for logs and tests. */
  get size(): number {
    return this.pooled.filter((p) => !p.claimed).length;
  }

  /** An episode's fresh seed of `key` succeeded here. */
  seeded(key: string | undefined): void {
    if (key !== undefined) this.goodKeys.add(key);
  }

  /**
   * Seeded, or under way for a key seeded here before: not otherwise a first seed of a key, which may fail after as
   * long as the episode's own would take (the claim would then seed fresh past its time limit). Except one seeded
   * while its batch started: it began before the episode's own seed could, so waiting for it is shorter than seeding
   * fresh, and only the first few episodes of a batch (the pool's size) could seed fresh after such a failure.
   */
  private claimable(p: Pooled): boolean {
    return p.handle !== undefined || this.goodKeys.has(p.key) || p.for !== undefined;
  }

  private claimableBy(p: Pooled, workflowId: string): boolean {
    return p.for === undefined || p.for === workflowId;
  }

  private async take(p: Pooled, name: string): Promise<SandboxHandle | undefined> {
    p.claimed = true;
    const handle = p.handle ?? await p.ready;
    this.forget(p);
    // A seed begun for this very episode that the task's own setup failed (not the engine) fails it as its own would
    // have: seeding again would take as long and end the same way.
    if (!handle && p.for !== undefined && p.failure instanceof SeedFailed) throw p.failure;
    if (!handle) return undefined;
    try {
      return await this.d.provider.rename(handle, name);
    } catch {
      // The name is taken (an earlier attempt's own sandbox, adopted by the fresh seed): this one goes.
      await this.d.provider.teardown(handle).catch(() => undefined);
      return undefined;
    }
  }

  /**
   * One look at a time; a look asked for while one runs is that one, unless `again` (something changed it may not
   * have seen). A `full` look asks every batch; others use a batch's recent answer while it still covers the pool.
   */
  private look(o: { again?: boolean; full?: boolean } = {}): Promise<void> {
    if (this.looking) {
      this.lookAgain ||= o.again === true;
      return this.looking;
    }
    this.looking = (async () => {
      let full = o.full === true;
      do {
        this.lookAgain = false;
        await this.lookNow(full).catch((err: Error) => this.d.log(`warm pool: ${err.message}`));
        full = false;
      } while (this.lookAgain && !this.closed);
    })().finally(() => { this.looking = undefined; });
    return this.looking;
  }

  /**
   * The batch's recent answer while it still tells the pool enough: the timer's looks renew it (so it is at most
   * two intervals old), and it is the whole rest of the batch or more episodes than the pool holds.
   */
  private recent(served: Served): UpcomingEpisodes | undefined {
    const last = served.last;
    if (!last || Date.now() - last.at >= 2 * LOOK_EVERY_MS) return undefined;
    const left = last.state.upcoming.reduce((n, u) => n + u.remaining, 0);
    return last.whole || left > this.d.max ? last.state : undefined;
  }

  private async lookNow(full: boolean): Promise<void> {
    for (const [batchId, served] of this.batches) {
      const recent = full ? undefined : this.recent(served);
      const state = recent ?? await this.batchState(batchId, served);
      if (this.closed) return;
      if (state === 'closed' || state.paused) {
        this.drain(batchId);
        if (state === 'closed') {
          this.batches.delete(batchId);
          for (const id of this.runs.keys()) if (id.startsWith(`${batchId}\0`)) this.runs.delete(id);
        }
        continue;
      }
      await this.refill(batchId, served, state, recent === undefined);
    }
    this.removeLost();
    if (this.batches.size === 0 && this.pooled.length === 0) {
      clearInterval(this.timer);
      this.timer = undefined;
    }
  }

  private async batchState(batchId: string, served: Served): Promise<UpcomingEpisodes | 'closed'> {
    const handle = served.client.workflow.getHandle(batchWorkflowId(batchId));
    try {
      if ((await handle.describe()).status.name !== 'RUNNING') return 'closed';
      delete served.ahead;
      const state = await handle.query<UpcomingEpisodes>(UPCOMING_QUERY);
      // Kept as it is: upcomingAfterSeed makes a new answer rather than change this one.
      served.last = { state, at: Date.now(), whole: state.upcoming.length < UPCOMING_RUNS };
      return state;
    } catch (err) {
      // Prepared here and not started yet: its first episodes, for a while.
      if (err instanceof WorkflowNotFoundError) return served.ahead && Date.now() < served.ahead.until ? { paused: false, upcoming: served.ahead.upcoming } : 'closed';
      // A batch started before the query existed answers none: nothing to seed ahead for it.
      return { paused: false, upcoming: [] };
    }
  }

  /**
   * Seeds what the batch's next episodes want. Removes only on an answer the batch just gave (`asked`): a recent one
   * less the episodes seeded since (upcomingAfterSeed) may count one episode too few, which must not cost a sandbox.
   */
  private async refill(batchId: string, served: Served, state: UpcomingEpisodes, asked: boolean): Promise<void> {
    const runs = await Promise.all(state.upcoming.map(async (u) => ({ ...(await this.runSeed(served.base, u)), taskId: u.taskId, remaining: u.remaining })));
    if (asked && !served.ahead) this.removeStartedElsewhere(batchId, state);
    const held: Record<string, number> = {};
    for (const p of this.pooled) if (!p.claimed) held[p.key] = (held[p.key] ?? 0) + 1;
    const { seed, surplus } = poolWants(runs.filter((r) => r.key === undefined || !this.failedKeys.has(r.key)), held, this.d.max);
    if (asked) this.removeSurplus(batchId, surplus);
    for (const key of seed) {
      const run = runs.find((r) => r.key === key)!;
      // Before the batch starts, each seed is made for one of its first episodes, which alone may claim it.
      const ahead = served.ahead;
      const episode = ahead?.episodes.find((e) => !ahead.seededFor.has(e.workflowId) && runs.some((r) => r.taskId === e.taskId && r.key === key));
      if (ahead && !episode) continue;
      const target = ahead && episode ? { workflowId: episode.workflowId, place: aheadEpisodeOf(ahead, episode.workflowId) } : undefined;
      if (!(await this.seedAhead(batchId, key, run.task!, run.spec!, target))) return;
      if (episode) ahead?.seededFor.add(episode.workflowId);
    }
  }

  /** Sandboxes no upcoming episode would claim, once they have been so for a while (surplusFate). */
  private removeSurplus(batchId: string, surplus: Record<string, number>): void {
    const now = Date.now();
    // One seeded for an episode is never surplus: its episode alone claims it, and removeStartedElsewhere decides.
    const held = this.pooled.filter((p) => p.batchId === batchId && p.for === undefined && !p.claimed).map((p) => ({ p, at: p.at, since: p.surplusSince }));
    for (const h of held) h.p.surplusSince = undefined;
    for (const [key, n] of Object.entries(surplus)) {
      const fate = surplusFate(held.filter((h) => h.p.key === key), n, now, SURPLUS_GRACE_MS);
      for (const [h, since] of fate.surplus) h.p.surplusSince = since;
      for (const h of fate.remove) void this.remove(h.p);
    }
  }

  /**
   * Sandboxes seeded for one episode of the started batch that the episode will not claim: it started, holds no slot
   * here, and has not for a while (aheadSeedFate). One whose episode is still to start, or is starting here, stays.
   */
  private removeStartedElsewhere(batchId: string, state: UpcomingEpisodes): void {
    const leases = this.d.slots.leases();
    const now = Date.now();
    for (const p of this.pooled.filter((q) => q.batchId === batchId && q.for !== undefined && !q.claimed)) {
      const upcoming = p.place !== undefined && stillUpcoming(state, p.place);
      const fate = aheadSeedFate({ upcoming, slotHere: leases.some((l) => l.key === p.for), startedSeenAt: p.startedSeenAt, now, graceMs: STARTED_GRACE_MS });
      p.startedSeenAt = fate.startedSeenAt;
      if (fate.remove) void this.remove(p);
    }
  }

  /** The key (and what seeding needs) of an upcoming run's task, worked out once per task and batch. */
  private runSeed(base: EpisodeInput, u: UpcomingEpisodes['upcoming'][number]): Promise<RunSeed> {
    const id = `${base.batchId}\0${u.taskPath}\0${u.digest}\0${u.baseImageId ?? ''}`;
    let run = this.runs.get(id);
    if (!run) {
      run = (async () => {
        const input: EpisodeInput = { ...base, taskId: u.taskId, taskPath: u.taskPath, digest: u.digest, repeat: 0, attempt: 1 };
        if (u.baseImageId !== undefined) input.baseImageId = u.baseImageId;
        else delete input.baseImageId;
        const task = await this.d.loadEpisodeTask(input);
        if (task.compose || task.digest !== u.digest) return { key: undefined };
        const spec = await agentSeedSpec(this.d, task, {
          name: '', labels: { batch: base.batchId, workflowId: '', role: 'agent' },
          imageAliases: input.imageAliases, ...(input.baseImageId ? { baseImageId: input.baseImageId } : {}), hostEnv: process.env, agent: input.agent,
        });
        return { key: seedKey(task, spec, input.agent), task, spec };
      })().catch(() => ({ key: undefined }));
      this.runs.set(id, run);
    }
    return run;
  }

  /** One sandbox seeded ahead under a pool name and labels (and for one episode's, its workflow's); false when no slot is free. */
  private async seedAhead(batchId: string, key: string, task: Task, spec: SandboxSpec, episode?: { workflowId: string; place: AheadEpisode | undefined }): Promise<boolean> {
    const forEpisode = episode?.workflowId;
    const name = `${POOL_NAME_PREFIX}${randomBytes(6).toString('hex')}`;
    if (!(await this.d.slots.reservePool({ name, key, task: task.digest, owner: this.d.owner, ...(forEpisode !== undefined ? { for: forEpisode } : {}) }))) return false;
    const labels = { ...spec.labels, ...(forEpisode !== undefined ? { workflowId: forEpisode } : {}), pool: { queue: this.d.queue, owner: this.d.owner, key } };
    const p: Pooled = {
      name, key, batchId, at: Date.now(), ready: Promise.resolve(undefined),
      ...(forEpisode !== undefined ? { for: forEpisode } : {}), ...(episode?.place ? { place: episode.place } : {}),
    };
    p.ready = seedAgentFromSpec(this.d, task, { ...spec, name, labels }, (this.batches.get(batchId)?.base ?? { agent: undefined }).agent)
      .then((handle) => {
        p.handle = handle;
        this.goodKeys.add(key);
        return handle;
      }, (err: Error) => {
        if (p.dropped) return undefined;
        // A seed that fails ahead fails for the episode too: it seeds fresh and reports it (or, claimed while under
        // way, takes this failure: take); the pool stops trying.
        p.failure = err;
        this.failedKeys.add(key);
        this.d.log(`warm pool: seeding ahead for ${task.id} failed (${err.message.split('\n')[0]}); its episodes seed fresh`);
        void this.remove(p);
        return undefined;
      });
    this.pooled.push(p);
    return true;
  }

  private drain(batchId: string): void {
    for (const p of this.pooled.filter((q) => q.batchId === batchId && !q.claimed)) void this.remove(p);
  }

  /** Pooled sandboxes whose slot another process's episode took over (tryReserve) or the reconciler freed: removed. */
  private removeLost(): void {
    const leases = this.d.slots.leases();
    for (const p of this.pooled.filter((q) => !q.claimed)) {
      if (leases.some((l) => l.pool?.name === p.name || l.pooled === p.name)) continue;
      this.forget(p);
      void p.ready.then(() => this.d.provider.teardown(p.name)).catch(() => undefined);
    }
  }

  /** Removed by the host's remover, its slot freed once it is gone. */
  private remove(p: Pooled): Promise<void> {
    this.forget(p);
    const key = `pool/${p.name}`;
    const schedule = () => this.d.remover.schedule(key, [p.name], freeing(this.d.slots, key));
    if (p.handle) {
      schedule();
      return Promise.resolve();
    }
    // Still seeding: removed now (so its seed fails soon) and again once its seed has ended, then its slot freed.
    p.dropped = true;
    void this.d.provider.teardown(p.name).catch(() => undefined);
    return p.ready.then(schedule);
  }

  private forget(p: Pooled): void {
    this.pooled = this.pooled.filter((q) => q !== p);
  }
}
