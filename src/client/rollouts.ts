// Rollout runs for a trainer (docs/training.md): start one under an idempotency key, read its groups from a cursor,
// acknowledge them, add work, set the policy version, drain and resume, cancel. Every call goes to the run's workflow:
// nothing is kept here, so any number of `berth serve` processes (or scripts) can speak for the same run.
import { WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError, type Client } from '@temporalio/client';
import { basename, resolve } from 'node:path';
import { checkAgentName, nothingLoaded } from './batch.ts';
import { prepareInput, prepareTasks } from './prepare.ts';
import { loadDataset, toSkippedEntry } from '../task/index.ts';
import { loadBerthConfig, loaderOptions } from '../config/berth-config.ts';
import { sharedQueue } from '../config/index.ts';
import { groupPolicyProblem, POLICY_QUERY, type PolicyChange } from '../rollouts/policy.ts';
import { runBatchId, runKeyProblem, runWorkflowId } from '../rollouts/episodes.ts';
import { RUN_QUERIES, RUN_UPDATES, type AddWork } from '../rollouts/run-input.ts';
import type { RolloutRunInput } from '../workflows/rollout-types.ts';
import type { AgentName } from '../workflows/types.ts';
import type { Group, GroupPolicy, PolicyState, RunStatus, RunTask, Sampling } from '../rollouts/types.ts';
import type { SkippedEntry } from './results.ts';
import { callsPolicy, trainingRefusal } from '../tokens/index.ts';
import { probePolicyBeforeRun } from './probe.ts';
import { groupWithTokens } from './episode-tokens.ts';
import type { ResultsStore } from '../store/index.ts';

export interface StartRunOptions {
  /** The idempotency key: the same key answers the same run, never a second one. */
  key: string;
  dataset: string;
  /** Only these task ids (default every task of the dataset). */
  tasks?: string[];
  n: number;
  agent: string;
  agentArgs?: Record<string, string>;
  /** `endpoint`: the OpenAI-compatible server (vLLM, SGLang), with or without /v1; `apiKeyVar`: a worker env var with its key. */
  policy: { endpoint: string; model: string; version?: number; apiKeyVar?: string };
  sampling?: Sampling;
  groupPolicy?: GroupPolicy;
  maxStaleness?: number | null;
  concurrency?: number;
  keepOpen?: boolean;
  taskQueue?: string;
  configFile?: string;
  prepare?: boolean;
  continueAsNewAfter?: number;
}

export class RunRequestError extends Error {
  constructor(message: string, readonly status = 400) { super(message); }
}

/** The dataset's tasks as a run pins them (digest, prepared image), with the refused ones listed. */
export async function loadRunTasks(client: Client, opts: { dataset: string; agent: string; only?: string[]; configFile?: string; taskQueue?: string; prepare?: boolean }):
  Promise<{ root: string; tasks: RunTask[]; skipped: SkippedEntry[]; imageAliases: Record<string, string> }> {
  const loaded = opts.configFile === undefined ? loadBerthConfig() : loadBerthConfig(opts.configFile);
  const loader = loaderOptions(loaded);
  const imageAliases = { ...loaded.config.images.aliases };
  const resourceOverride = Object.keys(loaded.config.resources).length > 0 ? { ...loaded.config.resources } : undefined;
  const only = opts.only ? new Set(opts.only) : undefined;
  const dataset = await loadDataset(resolve(opts.dataset), {
    agent: opts.agent, imageAliases, resourceOverride, ...loader, logger: { warn: () => undefined }, ...(only ? { only: (id: string) => only.has(id) } : {}),
  });
  if (dataset.tasks.length === 0) throw new RunRequestError(nothingLoaded(opts.dataset, dataset.refused.map(toSkippedEntry)), 422);
  if (only) {
    const missing = [...only].filter((id) => !dataset.tasks.some((t) => t.id === id) && !dataset.refused.some((r) => r.task_id === id));
    if (missing.length > 0) throw new RunRequestError(`no task ${missing.map((m) => JSON.stringify(m)).join(', ')} in ${dataset.root}`, 404);
  }
  let tasks: RunTask[] = dataset.tasks.map((t) => ({ taskId: t.id, taskPath: t.path, digest: t.digest }));
  const skipped = dataset.refused.map(toSkippedEntry);
  if (opts.prepare !== false) {
    const toPrepare = { root: dataset.root, imageAliases, separateVerifierForArtifacts: loader.separateVerifierForArtifacts === true };
    const prepared = await prepareTasks(client, prepareInput(toPrepare, tasks, opts.agent), opts.taskQueue);
    skipped.push(...prepared.skipped);
    const failed = new Set(prepared.skipped.map((s) => s.task_id));
    const pins = new Map(prepared.outcomes.flatMap((o) => (o.ok && o.baseImageId ? [[o.taskId, o.baseImageId] as const] : [])));
    tasks = tasks.filter((t) => !failed.has(t.taskId)).map((t) => (pins.has(t.taskId) ? { ...t, baseImageId: pins.get(t.taskId)! } : t));
    if (tasks.length === 0) throw new RunRequestError(`No task of ${opts.dataset} has an image ready:\n${skipped.map((s) => `  ${s.task_id}: ${s.reason}`).join('\n')}`, 422);
  }
  return { root: dataset.root, tasks, skipped, imageAliases };
}

function checkStart(opts: StartRunOptions): void {
  const problems = [
    runKeyProblem(opts.key),
    Number.isInteger(opts.n) && opts.n >= 1 ? null : `n (samples per group) must be a whole number ≥ 1, got ${JSON.stringify(opts.n)}`,
    opts.groupPolicy ? groupPolicyProblem(opts.groupPolicy) : null,
    opts.maxStaleness == null || (Number.isInteger(opts.maxStaleness) && opts.maxStaleness >= 0) ? null : `max_staleness must be a whole number ≥ 0, got ${JSON.stringify(opts.maxStaleness)}`,
    typeof opts.policy?.endpoint === 'string' && /^https?:\/\//.test(opts.policy.endpoint) ? null : `policy.endpoint must be an http(s) URL of an OpenAI-compatible server, got ${JSON.stringify(opts.policy?.endpoint)}`,
    typeof opts.policy?.model === 'string' && opts.policy.model !== '' ? null : 'policy.model must name the model the endpoint serves',
  ].filter((p): p is string => p !== null);
  if (problems.length > 0) throw new RunRequestError(`${problems.join('; ')} (docs/training.md, The rollout API)`);
  try { checkAgentName(opts.agent); } catch (err) { throw new RunRequestError((err as Error).message); }
  // Refused when the run is asked for, before any episode or sandbox (docs/training.md, What each agent gives).
  const untrainable = trainingRefusal(opts.agent);
  if (untrainable) throw new RunRequestError(`training mode refused: ${untrainable}`, 422);
}

/** Starts the run named by `key`, or answers the run that key already names (created false): never a second one. */
export async function startRun(client: Client, opts: StartRunOptions): Promise<{ run: RunHandle; created: boolean; skipped: SkippedEntry[] }> {
  checkStart(opts);
  const run = new RunHandle(client, opts.key);
  if (await run.exists()) return { run, created: false, skipped: [] };
  if (callsPolicy(opts.agent)) {
    const { endpoint, model, apiKeyVar } = opts.policy;
    const probe = await probePolicyBeforeRun(client, { endpoint, model, ...(apiKeyVar ? { apiKeyVar } : {}) }, opts.taskQueue);
    if (!probe.ok) throw new RunRequestError(`the run was not started: ${probe.reason}`, 422);
  }
  const loaded = await loadRunTasks(client, { dataset: opts.dataset, agent: opts.agent, only: opts.tasks, configFile: opts.configFile, taskQueue: opts.taskQueue, prepare: opts.prepare });
  const { config } = opts.configFile === undefined ? loadBerthConfig() : loadBerthConfig(opts.configFile);
  const input: RolloutRunInput = {
    key: opts.key,
    base: {
      batchId: runBatchId(opts.key), datasetName: basename(loaded.root), datasetPath: loaded.root, agent: opts.agent as AgentName, agentArgs: opts.agentArgs ?? {},
      imageAliases: loaded.imageAliases,
      episodeSettings: {
        defaultTimeoutSec: config.episode.default_timeout_seconds, enforceTaskTimeouts: config.episode.enforce_task_timeouts,
        sandboxReadyTimeoutSec: config.episode.sandbox_ready_timeout_s,
        // The episode's files, token records included, go to the results store as the episode closes (issue 39).
        ...(config.results.store ? { resultsStore: config.results.store } : {}),
      },
    },
    tasks: loaded.tasks, n: opts.n, groupPolicy: opts.groupPolicy ?? { kind: 'mask' }, maxStaleness: opts.maxStaleness ?? null,
    policy: {
      endpoint: { baseUrl: baseUrlOf(opts.policy.endpoint), model: opts.policy.model, ...(opts.policy.apiKeyVar ? { apiKeyVar: opts.policy.apiKeyVar } : {}) },
      version: opts.policy.version ?? 0, sampling: opts.sampling ?? {},
    },
    concurrency: opts.concurrency ?? 8, keepOpen: opts.keepOpen ?? false,
    ...(opts.continueAsNewAfter !== undefined ? { continueAsNewAfter: opts.continueAsNewAfter } : {}),
  };
  try {
    await client.workflow.start('rolloutRunWorkflow', {
      taskQueue: opts.taskQueue ?? sharedQueue(), workflowId: runWorkflowId(opts.key), args: [input],
      // A key names one run for as long as Temporal remembers it: a closed run is not started again either.
      workflowIdReusePolicy: 'REJECT_DUPLICATE',
      staticSummary: `rollout run ${opts.key} · ${input.tasks.length} tasks × ${opts.n} · ${opts.agent}`,
    });
  } catch (err) {
    if (err instanceof WorkflowExecutionAlreadyStartedError) return { run, created: false, skipped: [] };
    throw err;
  }
  return { run, created: true, skipped: loaded.skipped };
}

/** The endpoint as the gateway takes it: without a trailing /v1 (it appends /v1/chat/completions). */
export const baseUrlOf = (endpoint: string): string => endpoint.replace(/\/+$/, '').replace(/\/v1$/, '');

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A run by its key. */
export class RunHandle {
  readonly workflowId: string;
  constructor(readonly client: Client, readonly key: string) { this.workflowId = runWorkflowId(key); }

  private get handle() { return this.client.workflow.getHandle(this.workflowId); }

  async exists(): Promise<boolean> {
    try {
      await this.handle.describe();
      return true;
    } catch (err) {
      if (err instanceof WorkflowNotFoundError) return false;
      throw err;
    }
  }

  status(): Promise<RunStatus> { return this.handle.query<RunStatus>(RUN_QUERIES.status); }
  policy(): Promise<PolicyState> { return this.handle.query<PolicyState>(POLICY_QUERY); }
  /** Groups after cursor `after` (at most `limit`; 0: all), never one already acknowledged. */
  groups(after = 0, limit = 0): Promise<Group[]> { return this.handle.query<Group[], [number, number]>(RUN_QUERIES.groups, after, limit); }
  /** Acknowledges every group up to `seq`; answers the acknowledged cursor. */
  ack(seq: number): Promise<number> { return this.handle.executeUpdate<number, [number]>(RUN_UPDATES.ack, { args: [seq] }); }
  addWork(work: AddWork): Promise<number[]> { return this.handle.executeUpdate<number[], [AddWork]>(RUN_UPDATES.addWork, { args: [work] }); }
  setPolicy(change: PolicyChange): Promise<PolicyState> { return this.handle.executeUpdate<PolicyState, [PolicyChange]>(RUN_UPDATES.setPolicy, { args: [change] }); }
  drain(): Promise<PolicyState> { return this.handle.executeUpdate<PolicyState, []>(RUN_UPDATES.drain); }
  resume(): Promise<PolicyState> { return this.handle.executeUpdate<PolicyState, []>(RUN_UPDATES.resume); }
  cancel(): Promise<RunStatus> { return this.handle.executeUpdate<RunStatus, []>(RUN_UPDATES.cancel); }
  close(): Promise<RunStatus> { return this.handle.executeUpdate<RunStatus, []>(RUN_UPDATES.close); }

  /**
   * The group with each row's token records and linked sequences inline (`token_records`, `token_rollout`, or
   * `tokens_error`), read from this machine when the episode's logs folder is here, else from `store` (the results
   * store berth.toml names: `openStore(config)`), so a trainer on any machine gets them after the worker host is gone.
   */
  withTokens(group: Group, store: ResultsStore | null): Promise<Group> { return groupWithTokens(group, runBatchId(this.key), store); }

  /**
   * Every group after `after` as it completes, until the run has nothing more to deliver (done or cancelled) or
   * `signal` aborts. Groups are read from the run, so a reader that reconnects with its last acknowledged cursor
   * continues exactly there. With `tokens`, each group comes with its tokens inline (`withTokens`).
   */
  async *stream(after = -1, opts: { pollMs?: number; signal?: AbortSignal; tokens?: { store: ResultsStore | null } } = {}): AsyncGenerator<Group> {
    let cursor = after < 0 ? (await this.status()).acked : after;
    while (!opts.signal?.aborted) {
      const groups = await this.groups(cursor);
      for (const g of groups) {
        cursor = g.seq;
        yield opts.tokens ? await this.withTokens(g, opts.tokens.store) : g;
      }
      if (groups.length > 0) continue;
      const s = await this.status();
      if (s.complete && s.lastSeq <= Math.max(cursor, s.acked)) return;
      await pause(opts.pollMs ?? 250);
    }
  }
}
