// Where a reader finds an episode's token files (docs/training.md, Tokens): the attempt's key in the store, and the
// files of a logs folder on this machine, or why they cannot be read when it has none and no store is set.
import { describe, expect, it } from 'vitest';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readEpisodeFiles, sampleTokens, storedAttemptOf } from '../../src/client/episode-tokens.ts';
import { episodeLogsDir } from '../../src/host/logs.ts';
import { attemptKey } from '../../src/store/keys.ts';
import type { SampleRow } from '../../src/rollouts/types.ts';

describe('storedAttemptOf', () => {
  it.each([
    ['a rollout sample', 'p', 'rollout-k1', 'berth/rollout-k1/hello/g0-1', '0190-aaaa'],
    ['a retried sample (its own workflow id)', '', 'rollout-k1', 'berth/rollout-k1/hello/g0-1~a2', '0190-bbbb'],
    ['a NeMo Gym /run', 'team/rl', 'gym', 'berth/gym/hello/rid-7', '0190-cccc'],
  ])('%s: the key its host uploaded it under, from the run id ending its logs folder', (_name, prefix, batchId, workflowId, runId) => {
    const logsDir = episodeLogsDir(workflowId, runId);
    expect(storedAttemptOf({ prefix }, { batchId, workflowId, logsDir })).toBe(attemptKey({ prefix }, batchId, workflowId, runId));
    expect(storedAttemptOf({ prefix }, { batchId, workflowId, logsDir: `${logsDir}/` })).toBe(attemptKey({ prefix }, batchId, workflowId, runId));
  });

  it.each([
    ['the row names its key', { logsDir: '/h/episodes/x/r1', storeKey: 'elsewhere/b/episodes/x/r0' }, 'elsewhere/b/episodes/x/r0'],
    ['no logs folder and no key', { logsDir: null }, null],
    ['a logs folder that names no run', { logsDir: '/' }, null],
  ])('%s', (_name, ref, want) => {
    expect(storedAttemptOf({ prefix: 'p' }, { batchId: 'b', workflowId: 'x', ...ref })).toBe(want);
  });
});

describe('readEpisodeFiles and sampleTokens without a store', () => {
  const dir = mkdtempSync(join(tmpdir(), 'berth-episode-tokens-'));
  const record = { schema_version: 1, model_call_id: 'c1', prompt_token_ids: [1, 2], generation_token_ids: [3], generation_log_probs: [-0.5] };
  writeFileSync(join(dir, 'token-records.jsonl'), `${JSON.stringify(record)}\n`);
  writeFileSync(join(dir, 'token-rollout.json'), JSON.stringify({ schema_version: 1, rollout_id: 'r', calls: 1, masked: null, sequences: [], links: [], dropped: [] }));

  const row = (logsDir: string | null, tokens: string | null): SampleRow => ({
    task_id: 't', group: 0, sample: 0, attempt: 1, valid: true, reward: 1, mask_sample: false, failure_kind: null, failure_reason: null,
    workflow_id: 'berth/b/t/g0-1', logs_dir: logsDir, tokens: null, policy_version: 0,
    training: { tokens, calls: tokens ? 1 : 0, first_version: 0, last_version: 0, exact: true },
  });

  it('reads the files of a logs folder on this machine', async () => {
    const read = await readEpisodeFiles({ batchId: 'b', workflowId: 'w', logsDir: dir }, ['token-records.jsonl', 'absent.json'], null);
    expect(read.get('token-records.jsonl')).toEqual({ text: `${JSON.stringify(record)}\n`, from: 'here' });
    expect(read.get('absent.json')).toEqual({ missing: expect.stringMatching(/absent\.json of w is not on this machine .* names no results store/) });
  });

  it.each([
    ['records here', row(dir, 'token-records.jsonl'), { token_records: [record], token_rollout: expect.objectContaining({ calls: 1, masked: null }) }],
    ['no captured call (oracle, a masked placeholder)', row(dir, null), { token_records: null, token_rollout: null }],
    ['records neither here nor in a store', row('/nonexistent/episodes/x/r1', 'token-records.jsonl'),
      { token_records: null, token_rollout: null, tokens_error: expect.stringMatching(/is not on this machine \(\/nonexistent\/episodes\/x\/r1\/token-records\.jsonl\)/) }],
  ])('sampleTokens: %s', async (_name, r, want) => {
    expect(await sampleTokens(r, 'b', null)).toEqual(want);
  });

});
