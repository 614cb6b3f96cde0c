// An episode in training mode on this worker: the policy its gateway scopes follow (the serve process's run workflow,
// read in the background through this worker's Temporal client, one loop per run), the token records file beside
// the episode's logs, and the row's summary of them.
import { Context } from '@temporalio/activity';
import { appendFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { TrainingScope } from '../gateway/index.ts';
import {
  DEFAULT_LINK_SETTINGS, initialPolicyState, linkCalls, LocalPolicyState, parseTokenRecords, POLICY_QUERY, PolicyStateHub, policyStateOf,
  rowTrainingOf, TOKEN_RECORDS_FILE, TOKEN_ROLLOUT_FILE, type EpisodeTraining, type PolicyStateSource, type RowTraining, type RunPolicy,
} from '../tokens/index.ts';

const hub = new PolicyStateHub();

/** The run's policy as this worker follows it; without a run workflow (a fixed policy), the episode's own. */
export function policySourceFor(t: EpisodeTraining): PolicyStateSource {
  if (!t.runWorkflowId) return new LocalPolicyState(initialPolicyState(t));
  const client = Context.current().client;
  const read = async () => policyStateOf(await client.workflow.getHandle(t.runWorkflowId).query<RunPolicy>(POLICY_QUERY), t);
  return hub.acquire(t.runWorkflowId, read, initialPolicyState(t));
}

export const tokenRecordsOf = (episodeDir: string): string => join(episodeDir, TOKEN_RECORDS_FILE);

/** A gateway scope's training part: records appended to the episode's file as calls end (one line each). */
export function trainingScopeFor(t: EpisodeTraining, episodeDir: string, turn: number, rolloutId: string): TrainingScope {
  const file = tokenRecordsOf(episodeDir);
  return { rolloutId, turn, policy: policySourceFor(t), onRecord: (r) => appendFileSync(file, `${JSON.stringify(r)}\n`) };
}

/** Links the episode's calls so far into token-rollout.json beside the records, and says what the row carries. */
export function summariseTokens(episodeDir: string, t: EpisodeTraining): RowTraining {
  const file = tokenRecordsOf(episodeDir);
  const records = existsSync(file) ? parseTokenRecords(readFileSync(file, 'utf8')) : [];
  const rollout = linkCalls(records, { ...DEFAULT_LINK_SETTINGS, ...t.link });
  writeFileSync(join(episodeDir, TOKEN_ROLLOUT_FILE), JSON.stringify({ schema_version: 1, rollout_id: records[0]?.rollout_id ?? null, calls: records.length, ...rollout }));
  return rowTrainingOf(records, rollout, TOKEN_RECORDS_FILE);
}
