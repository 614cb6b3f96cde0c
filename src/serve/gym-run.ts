// NeMo Gym's agent-server interface (docs/training.md, NeMo RL through NeMo Gym): POST /run is one durable episode,
// answered in the harbor agent's verify-response shape; POST /aggregate_metrics.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Client } from '@temporalio/client';
import { loadBerthConfig } from '../config/berth-config.ts';
import { loadRunTasks, baseUrlOf } from '../client/rollouts.ts';
import { runOneEpisode } from '../client/one-episode.ts';
import { readEpisodeFiles, type ResultsStore } from '../client/episode-tokens.ts';
import type { EpisodeInput, ResultRow } from '../workflows/types.ts';
import type { RunTask } from '../rollouts/types.ts';
import { aggregateMetrics, gymEpisodeKey, gymRunRequestProblem, gymVerifyResponse } from './gym-response.ts';
import type { GymRunRequest, GymTokenRecord } from './gym-types.ts';
import { HttpError, readJson, sendJson } from './http.ts';
import { gymGlobalConfig, gymGlobalConfigBody, reachedAt } from './gym-config.ts';

export interface GymContext {
  client: Client;
  taskQueue?: string;
  configFile?: string;
  dataset: string | undefined;
  agent: string | undefined;
  policy?: { endpoint: string; model: string };
  gymBatch: string;
  /** Tasks loaded and prepared once per serve process (a cache of what the dataset says, not state). */
  tasks: Map<string, Promise<{ task: RunTask; root: string }>>;
  /** Where token files not on this machine are read from (the results store berth.toml names), or null. */
  store: ResultsStore | null;
}

/**
 * The episode's token records (one file beside its logs, every turn's calls in order: row.training.tokens), from this
 * machine or else the results store. Records the row names that can be read from neither answer HTTP 503 (asking
 * again may find them, e.g. once the store is back): a response without them would hand the trainer no tokens.
 */
export async function episodeRecords(row: ResultRow | undefined, batchId: string, store: ResultsStore | null): Promise<GymTokenRecord[]> {
  const file = row?.training?.tokens;
  if (!row || !file) return [];
  const ref = { batchId, workflowId: row.workflow_id, logsDir: row.logs_dir, ...(row.store_key ? { storeKey: row.store_key } : {}) };
  const read = (await readEpisodeFiles(ref, [file], store).catch((err: Error) => {
    throw new HttpError(503, `the episode's token records cannot be read: ${err.message}`);
  })).get(file)!;
  if ('missing' in read) throw new HttpError(503, `the episode's token records cannot be read: ${read.missing}`);
  return read.text.split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l) as GymTokenRecord);
}

function taskOf(ctx: GymContext, name: string): Promise<{ task: RunTask; root: string }> {
  let found = ctx.tasks.get(name);
  if (!found) {
    found = loadRunTasks(ctx.client, { dataset: ctx.dataset!, agent: ctx.agent!, only: [name], configFile: ctx.configFile, taskQueue: ctx.taskQueue })
      .then((l) => ({ task: l.tasks[0]!, root: l.root }));
    found.catch(() => ctx.tasks.delete(name));
    ctx.tasks.set(name, found);
  }
  return found;
}

async function runEpisode(ctx: GymContext, req: GymRunRequest): Promise<{ id: string; row: ResultRow | undefined; instruction: string }> {
  const { task, root } = await taskOf(ctx, req.task_name);
  const { config } = ctx.configFile ? loadBerthConfig(ctx.configFile) : loadBerthConfig();
  const p = req.responses_create_params;
  const sampling = {
    ...(typeof p.temperature === 'number' ? { temperature: p.temperature } : {}),
    ...(typeof p.top_p === 'number' ? { top_p: p.top_p } : {}),
    ...(typeof p.max_output_tokens === 'number' ? { max_tokens: p.max_output_tokens } : {}),
  };
  const batchId = ctx.gymBatch;
  const id = `berth/${batchId}/${task.taskId}/${gymEpisodeKey(req)}`;
  const input: EpisodeInput = {
    batchId, datasetName: root.split('/').pop() ?? 'dataset', datasetPath: root, taskId: task.taskId, taskPath: task.taskPath, digest: task.digest,
    ...(task.baseImageId ? { baseImageId: task.baseImageId } : {}),
    repeat: req._ng_rollout_index + 1, attempt: 1, agent: ctx.agent as EpisodeInput['agent'], agentArgs: {}, imageAliases: { ...config.images.aliases },
    episodeSettings: {
      defaultTimeoutSec: config.episode.default_timeout_seconds, enforceTaskTimeouts: config.episode.enforce_task_timeouts,
      sandboxReadyTimeoutSec: config.episode.sandbox_ready_timeout_s,
      // The episode's files, token records included, go to the results store as the episode closes (issue 39).
      ...(config.results.store ? { resultsStore: config.results.store } : {}),
    },
    ...(ctx.policy ? {
      training: { runWorkflowId: '', endpoint: baseUrlOf(ctx.policy.endpoint), model: ctx.policy.model, version: 0, sampling },
    } : {}),
  };
  const instruction = readFileSync(join(task.taskPath, 'instruction.md'), 'utf8');
  return { id, row: await runOneEpisode(ctx.client, input, id, ctx.taskQueue), instruction };
}

export async function handleGym(ctx: GymContext, req: IncomingMessage, res: ServerResponse, url: URL): Promise<boolean> {
  if (req.method === 'GET' && url.pathname === '/global_config_dict_yaml') {
    const local = { host: req.socket.localAddress ?? '127.0.0.1', port: req.socket.localPort ?? 80 };
    const { host, port } = reachedAt(req.headers.host, local);
    return sendJson(res, 200, gymGlobalConfigBody(gymGlobalConfig(host, port))), true;
  }
  if (req.method !== 'POST' || (url.pathname !== '/run' && url.pathname !== '/aggregate_metrics')) return false;
  try {
    const body = await readJson(req);
    if (url.pathname === '/aggregate_metrics') return sendJson(res, 200, aggregateMetrics(body as { verify_responses?: [] })), true;
    const problem = gymRunRequestProblem(body);
    if (problem) throw new HttpError(422, problem);
    if (!ctx.dataset || !ctx.agent) throw new HttpError(422, 'berth serve answers /run for the dataset and agent berth.toml names: set [serve] dataset and agent (docs/training.md)');
    const gymReq = body as unknown as GymRunRequest;
    const { id, row, instruction } = await runEpisode(ctx, gymReq);
    const result = row
      ? { workflowId: id, reward: row.reward, mask_sample: row.mask_sample, failure_kind: row.failure_kind, failure_reason: row.failure_reason, response_text: row.response_text,
        verifier_rewards: row.verifier_rewards, ...(row.usage ? { usage: row.usage } : {}) }
      : { workflowId: id, reward: null, mask_sample: true, failure_kind: 'provider_unavailable', failure_reason: 'the episode workflow failed without a row (a failure on Berth\'s side)', response_text: '' };
    const model = ctx.policy?.model ?? String(gymReq.responses_create_params.model ?? ctx.agent);
    const records = await episodeRecords(row, ctx.gymBatch, ctx.store);
    sendJson(res, 200, gymVerifyResponse(gymReq, result, records, instruction, model, Date.now() / 1000));
  } catch (err) {
    if (err instanceof HttpError) sendJson(res, err.status, { detail: err.message });
    else if ((err as { status?: number }).status) sendJson(res, (err as { status: number }).status, { detail: (err as Error).message });
    else throw err;
  }
  return true;
}
