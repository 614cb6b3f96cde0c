// Berth's rollout API over HTTP (docs/training.md, The rollout API): runs under an idempotency key, their groups as
// NDJSON from a cursor, acknowledgement, work, policy, drain and resume. Each call goes to the run's workflow.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Client } from '@temporalio/client';
import { WorkflowNotFoundError, WorkflowUpdateFailedError } from '@temporalio/client';
import { RunHandle, RunRequestError, baseUrlOf, loadRunTasks, startRun, type StartRunOptions } from '../client/rollouts.ts';
import { DRAIN_SETTLE_MS } from '../rollouts/policy.ts';
import type { ResultsStore } from '../client/episode-tokens.ts';
import type { GroupPolicy } from '../rollouts/types.ts';
import { HttpError, readJson, sendJson } from './http.ts';

export interface RunsContext {
  client: Client;
  taskQueue?: string;
  configFile?: string;
  dataset: string | undefined;
  agent: string | undefined;
  /** Where token files not on this machine are read from (the results store berth.toml names), or null. */
  store: ResultsStore | null;
}

const num = (v: unknown): number | undefined => (v === undefined || v === null ? undefined : Number(v));

function groupPolicyOf(v: unknown): GroupPolicy | undefined {
  if (v === undefined) return undefined;
  const g = v as { kind?: string; max_retries?: unknown };
  return (g?.kind === 'retry' ? { kind: 'retry', maxRetries: g.max_retries } : g) as GroupPolicy;
}

function startOptions(ctx: RunsContext, body: Record<string, unknown>): StartRunOptions {
  const dataset = ctx.dataset;
  if (!dataset) throw new HttpError(422, 'berth serve has no dataset: set [serve] dataset = "path" in berth.toml (docs/training.md)');
  const agent = (body.agent as string | undefined) ?? ctx.agent;
  if (!agent) throw new HttpError(422, 'no agent: name one in the request ("agent") or set [serve] agent in berth.toml (docs/training.md)');
  const policy = (body.policy ?? {}) as Record<string, unknown>;
  return {
    key: body.key as string, dataset, tasks: body.tasks as string[] | undefined, n: Number(body.n), agent,
    agentArgs: (body.agent_args as Record<string, string> | undefined) ?? {},
    policy: {
      endpoint: policy.endpoint as string, model: policy.model as string, version: num(policy.version) ?? 0,
      ...(typeof policy.api_key_var === 'string' ? { apiKeyVar: policy.api_key_var } : {}),
    },
    sampling: (body.sampling as Record<string, unknown> | undefined) ?? {},
    ...(body.group_policy !== undefined ? { groupPolicy: groupPolicyOf(body.group_policy)! } : {}),
    maxStaleness: num(body.max_staleness) ?? null,
    ...(body.concurrency !== undefined ? { concurrency: Number(body.concurrency) } : {}),
    keepOpen: body.keep_open === true,
    ...(ctx.taskQueue ? { taskQueue: ctx.taskQueue } : {}),
    ...(ctx.configFile ? { configFile: ctx.configFile } : {}),
    ...(body.continue_as_new_after !== undefined ? { continueAsNewAfter: Number(body.continue_as_new_after) } : {}),
  };
}

/**
 * Writes every group after the cursor as one NDJSON line until the run has nothing more, or the reader leaves; with
 * `tokens`, each row's tokens inline (from this machine, or else the results store).
 */
async function streamGroups(run: RunHandle, after: number, tokens: { store: ResultsStore | null } | undefined, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const abort = new AbortController();
  req.on('close', () => abort.abort());
  res.on('close', () => abort.abort());
  res.writeHead(200, { 'content-type': 'application/x-ndjson', 'cache-control': 'no-store' });
  try {
    for await (const group of run.stream(after, { signal: abort.signal, ...(tokens ? { tokens } : {}) })) {
      if (!res.write(`${JSON.stringify(group)}\n`)) await new Promise((r) => res.once('drain', r));
    }
  } finally {
    res.end();
  }
}

/** Handles /runs and /runs/<key>/...; answers false when the path is not the rollout API's. */
export async function handleRuns(ctx: RunsContext, req: IncomingMessage, res: ServerResponse, url: URL): Promise<boolean> {
  const parts = url.pathname.split('/').filter(Boolean);
  if (parts[0] !== 'runs') return false;
  try {
    if (parts.length === 1 && req.method === 'POST') {
      const { run, created, skipped } = await startRun(ctx.client, startOptions(ctx, await readJson(req)));
      sendJson(res, created ? 201 : 200, { run_id: run.key, workflow_id: run.workflowId, created, skipped, status: await run.status() });
      return true;
    }
    const run = new RunHandle(ctx.client, decodeURIComponent(parts[1] ?? ''));
    const action = parts[2];
    if (parts.length === 2 && req.method === 'GET') return sendJson(res, 200, await run.status()), true;
    if (action === 'groups' && req.method === 'GET') {
      const after = url.searchParams.get('after');
      const tokens = ['1', 'true'].includes(url.searchParams.get('tokens') ?? '') ? { store: ctx.store } : undefined;
      if (url.searchParams.get('follow') === '0') {
        const groups = await run.groups(after === null ? (await run.status()).acked : Number(after));
        return sendJson(res, 200, tokens ? await Promise.all(groups.map((g) => run.withTokens(g, tokens.store))) : groups), true;
      }
      await streamGroups(run, after === null ? -1 : Number(after), tokens, req, res);
      return true;
    }
    if (req.method !== 'POST') throw new HttpError(405, `${req.method} ${url.pathname}: not an operation of the rollout API (docs/training.md)`);
    const body = await readJson(req);
    switch (action) {
      case 'ack': sendJson(res, 200, { acked: await run.ack(Number(body.seq)) }); return true;
      case 'cancel': sendJson(res, 200, await run.cancel()); return true;
      case 'close': sendJson(res, 200, await run.close()); return true;
      case 'resume': sendJson(res, 200, await run.resume()); return true;
      case 'drain': {
        const policy = await run.drain();
        // Every gateway refreshes the policy within this time: after it, no new call leaves a gateway.
        await new Promise((r) => setTimeout(r, DRAIN_SETTLE_MS));
        sendJson(res, 200, policy);
        return true;
      }
      case 'policy': {
        const change = {
          ...(body.version !== undefined ? { version: Number(body.version) } : {}),
          ...(typeof body.endpoint === 'string' ? { endpoint: baseUrlOf(body.endpoint) } : {}),
          ...(typeof body.model === 'string' ? { model: body.model } : {}),
          ...(body.sampling !== undefined ? { sampling: body.sampling as Record<string, unknown> } : {}),
        };
        sendJson(res, 200, await run.setPolicy(change));
        return true;
      }
      case 'work': {
        if (!ctx.dataset) throw new HttpError(422, 'berth serve has no dataset: set [serve] dataset in berth.toml');
        const loaded = await loadRunTasks(ctx.client, {
          dataset: ctx.dataset, agent: (body.agent as string | undefined) ?? ctx.agent ?? 'oracle', only: body.tasks as string[] | undefined,
          configFile: ctx.configFile, taskQueue: ctx.taskQueue,
        });
        const groups = await run.addWork({ tasks: loaded.tasks, ...(body.n !== undefined ? { n: Number(body.n) } : {}) });
        sendJson(res, 200, { groups, skipped: loaded.skipped });
        return true;
      }
      default: throw new HttpError(404, `${url.pathname}: no such operation (runs/<key>/{groups,ack,work,policy,drain,resume,cancel,close})`);
    }
  } catch (err) {
    if (err instanceof HttpError || err instanceof RunRequestError) sendJson(res, err.status, { error: err.message });
    else if (err instanceof WorkflowNotFoundError) sendJson(res, 404, { error: `no run with key ${JSON.stringify(parts[1])}` });
    else if (err instanceof WorkflowUpdateFailedError) sendJson(res, 422, { error: (err.cause as Error | undefined)?.message ?? err.message });
    else throw err;
    return true;
  }
}
