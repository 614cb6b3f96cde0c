// Prefix linking and loss masks over token records: exact extension links, anything else splits, drops or masks
// by the settings, never glued.
import { describe, expect, it } from 'vitest';
import { linkCalls, tokenDigest, type LinkSettings, type TokenRecord } from '../../src/tokens/index.ts';

function rec(id: string, prompt: number[], generation: number[], extra: Partial<TokenRecord> = {}): TokenRecord {
  return {
    schema_version: 1, rollout_id: 'r', model_call_id: id, model: 'm', prompt_token_ids: prompt, generation_token_ids: generation,
    generation_log_probs: generation.map((t) => -t / 100), output_items: [], token_item_index: 0, response_id: null, created_at: 0,
    parent_call_id: null, parent_resolution: null, cum_len: prompt.length + generation.length, digest: '', policy_version: 1, policy_version_end: 1,
    finish_reason: 'stop', dialect: 'openai-chat', stream: false, timing: { started_at: '', held_ms: 0, engine_ms: 0, total_ms: 0 }, turn: 0, capture_error: null,
    ...extra,
  };
}

const SPLIT_MASK: LinkSettings = { unextended: 'split', broken: 'mask' };

describe('linkCalls', () => {
  it('links a call that extends the previous prompt and completion, masking tool output as prompt', () => {
    const out = linkCalls([rec('a', [1, 2], [3, 4]), rec('b', [1, 2, 3, 4, 9, 9], [5], { policy_version: 2 })], SPLIT_MASK);
    expect(out.masked).toBeNull();
    expect(out.sequences).toHaveLength(1);
    const s = out.sequences[0]!;
    expect(s.token_ids).toEqual([1, 2, 3, 4, 9, 9, 5]);
    expect(s.loss_mask).toEqual([0, 0, 1, 1, 0, 0, 1]);
    expect(s.logprobs).toEqual([0, 0, -0.03, -0.04, 0, 0, -0.05]);
    expect(s.policy_versions).toEqual([1, 2]);
    expect(s.spans).toEqual([
      { call_id: 'a', prompt_start: 0, generation_start: 2, end: 4 },
      { call_id: 'b', prompt_start: 4, generation_start: 6, end: 7 },
    ]);
    expect(out.links.map((l) => [l.call_id, l.parent_call_id, l.parent_resolution])).toEqual([['a', null, 'root'], ['b', 'a', 'resolved']]);
  });

  const cases: Array<{ name: string; records: TokenRecord[]; settings: LinkSettings; sequences: number[][]; dropped: string[]; masked: RegExp | null }> = [
    {
      name: 'a retried call (same prompt as one already extended) starts its own sequence with split',
      records: [rec('a', [1], [2]), rec('b', [1, 2, 7], [3]), rec('b-retry', [1, 2, 7], [4])],
      settings: SPLIT_MASK, sequences: [[1, 2, 7, 3], [1, 2, 7, 4]], dropped: [], masked: null,
    },
    {
      name: 'a retried call is dropped with unextended = drop',
      records: [rec('a', [1], [2]), rec('b', [1, 2, 7], [3]), rec('b-retry', [1, 2, 7], [4])],
      settings: { unextended: 'drop', broken: 'mask' }, sequences: [[1, 2, 7, 3]], dropped: ['b-retry'], masked: null,
    },
    {
      name: 'a rewritten history (the prompt changes an earlier token) is not glued',
      records: [rec('a', [1, 2], [3]), rec('b', [1, 5, 3, 8], [9])],
      settings: SPLIT_MASK, sequences: [[1, 2, 3], [1, 5, 3, 8, 9]], dropped: [], masked: null,
    },
    {
      name: 'a subagent\'s calls form their own sequence and the main agent continues its own',
      records: [rec('m1', [1], [2]), rec('s1', [50], [51]), rec('s2', [50, 51, 52], [53]), rec('m2', [1, 2, 6], [7])],
      settings: SPLIT_MASK, sequences: [[1, 2, 6, 7], [50, 51, 52, 53]], dropped: [], masked: null,
    },
    {
      name: 'the subagent is dropped whole with unextended = drop (its later calls extend nothing kept)',
      records: [rec('m1', [1], [2]), rec('s1', [50], [51]), rec('s2', [50, 51, 52], [53]), rec('m2', [1, 2, 6], [7])],
      settings: { unextended: 'drop', broken: 'mask' }, sequences: [[1, 2, 6, 7]], dropped: ['s1', 's2'], masked: null,
    },
    {
      name: 'a call without tokens masks the rollout with broken = mask',
      records: [rec('a', [1], [2]), rec('b', [], [], { capture_error: 'no prompt_token_ids' }), rec('c', [1, 2, 3, 4], [5])],
      settings: SPLIT_MASK, sequences: [], dropped: [], masked: /call b cannot be resolved: its tokens were not captured \(no prompt_token_ids\)/,
    },
    {
      name: 'a call without tokens splits the sequences there with broken = split (nothing extends across the gap)',
      records: [rec('a', [1], [2]), rec('b', [], [], { capture_error: 'no prompt_token_ids' }), rec('c', [1, 2, 3, 4], [5])],
      settings: { unextended: 'split', broken: 'split' }, sequences: [[1, 2], [1, 2, 3, 4, 5]], dropped: ['b'], masked: null,
    },
    {
      name: 'a prompt that extends two identical sequences is ambiguous: masked',
      records: [rec('a', [1], [2]), rec('a2', [1], [2]), rec('c', [1, 2, 3], [4])],
      settings: SPLIT_MASK, sequences: [], dropped: [], masked: /call c cannot be resolved: its prompt extends 2 identical sequences/,
    },
    {
      name: 'an ambiguous prompt is split into its own sequence with broken = split',
      records: [rec('a', [1], [2]), rec('a2', [1], [2]), rec('c', [1, 2, 3], [4])],
      settings: { unextended: 'split', broken: 'split' }, sequences: [[1, 2], [1, 2], [1, 2, 3, 4]], dropped: [], masked: null,
    },
    {
      name: 'the longest open sequence wins when several are prefixes',
      records: [rec('a', [1], [2]), rec('x', [9], [9]), rec('b', [1, 2, 3], [4]), rec('c', [1, 2, 3, 4, 5], [6])],
      settings: SPLIT_MASK, sequences: [[1, 2, 3, 4, 5, 6], [9, 9]], dropped: [], masked: null,
    },
  ];

  for (const c of cases) {
    it(c.name, () => {
      const out = linkCalls(c.records, c.settings);
      expect(out.sequences.map((s) => s.token_ids)).toEqual(c.sequences);
      expect(out.dropped.map((d) => d.call_id)).toEqual(c.dropped);
      if (c.masked) expect(out.masked).toMatch(c.masked);
      else expect(out.masked).toBeNull();
      // Every generated token is marked 1, every other token 0.
      for (const s of out.sequences) {
        const generated = s.spans.reduce((n, sp) => n + sp.end - sp.generation_start, 0);
        expect(s.loss_mask.filter((m) => m === 1)).toHaveLength(generated);
      }
    });
  }
});

describe('tokenDigest', () => {
  // Values printed by NeMo Gym 0.7.0's own compute_digest (nemo_gym/token_id_capture/records.py, python 3.11).
  it.each([
    [[1, 2, 300000], '1297606cb9ab2b1819d4688aa4d64d1b3c5403ac8d1fd6b78451e03e15b88f6c'],
    [[], '2e222d36d0c6ae1db1ec18b3f96d9a46df5db61b40137bbfbac4cdf0acde9763'],
    [[200003, 17360, 198], '861060f483a1c72365bf0dd3842cf45613eb629fac937873c642c9f60e1961e1'],
  ])('matches NeMo Gym compute_digest for %j', (ids, digest) => {
    expect(tokenDigest(ids)).toBe(digest);
  });

  it('refuses a negative id', () => {
    expect(() => tokenDigest([-1])).toThrow(/non-negative/);
  });
});
