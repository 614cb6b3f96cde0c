import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  TIMEOUT_EXIT_CODES,
  scoreVerifierOutput,
  verifierOutputFromFiles,
  type VerifierOutput,
} from '../../src/verify/reward.ts';
import { FAILURE_REASON_MAX_CHARS, failureReason, tailOf } from '../../src/verify/failure-reason.ts';

const SPEC = 'Task Folder Verifiers § Reward files';
const base: VerifierOutput = { timedOut: false, testStdoutTail: 'grading…\n' };

interface Row {
  name: string;
  input: Partial<VerifierOutput>;
  reward: number;
  kind?: string;
  masked?: boolean;
  rewards?: Record<string, number>;
  components?: Record<string, number>;
  reasonHas?: string;
}

const rows: Row[] = [
  // Outcome table, row 1.
  { name: `${SPEC}, outcome "No reward file" → 0, harbor:missing_reward`,
    input: {}, reward: 0, kind: 'harbor:missing_reward', masked: false, rewards: {}, reasonHas: 'neither' },
  // Outcome table, row 2: empty files.
  { name: `${SPEC}, outcome "An empty … file" (reward.json) → 0, harbor:invalid_reward`,
    input: { rewardJson: '' }, reward: 0, kind: 'harbor:invalid_reward', reasonHas: 'reward.json is empty' },
  { name: `${SPEC}, outcome "An empty … file" (reward.json, whitespace only) → 0, harbor:invalid_reward`,
    input: { rewardJson: ' \n' }, reward: 0, kind: 'harbor:invalid_reward', reasonHas: 'reward.json is empty' },
  { name: `${SPEC}, outcome "An empty … file" (reward.txt) → 0, harbor:invalid_reward`,
    input: { rewardTxt: '' }, reward: 0, kind: 'harbor:invalid_reward', reasonHas: 'reward.txt is empty' },
  // Outcome table, row 2: malformed files.
  { name: `${SPEC}, outcome "… malformed file" (reward.json not JSON) → 0, harbor:invalid_reward`,
    input: { rewardJson: '{"reward": 1' }, reward: 0, kind: 'harbor:invalid_reward', reasonHas: 'not valid JSON' },
  { name: `${SPEC}, outcome "… malformed file" (reward.json a bare number) → 0, harbor:invalid_reward`,
    input: { rewardJson: '1' }, reward: 0, kind: 'harbor:invalid_reward', reasonHas: 'JSON object' },
  { name: `${SPEC}, outcome "… malformed file" (reward.json an array) → 0, harbor:invalid_reward`,
    input: { rewardJson: '[1]' }, reward: 0, kind: 'harbor:invalid_reward', reasonHas: 'an array' },
  { name: `${SPEC}, outcome "… malformed file" (reward.json null) → 0, harbor:invalid_reward`,
    input: { rewardJson: 'null' }, reward: 0, kind: 'harbor:invalid_reward', reasonHas: 'null' },
  { name: `${SPEC}, outcome "… malformed file" (reward.json "a non-empty JSON object": {}) → 0, harbor:invalid_reward`,
    input: { rewardJson: '{}' }, reward: 0, kind: 'harbor:invalid_reward', reasonHas: 'empty object' },
  { name: `${SPEC}, outcome "… malformed file" (reward.txt two numbers) → 0, harbor:invalid_reward`,
    input: { rewardTxt: '1 2' }, reward: 0, kind: 'harbor:invalid_reward', reasonHas: 'one number' },
  { name: `${SPEC}, outcome "… malformed file" (reward.txt text) → 0, harbor:invalid_reward`,
    input: { rewardTxt: 'passed' }, reward: 0, kind: 'harbor:invalid_reward', reasonHas: '"passed"' },
  { name: `${SPEC}, outcome "… malformed file" (reward.txt hex) → 0, harbor:invalid_reward`,
    input: { rewardTxt: '0x1' }, reward: 0, kind: 'harbor:invalid_reward' },
  // Outcome table, row 2: values that are not finite numbers.
  { name: `${SPEC}, outcome "a value that is not a finite number" (reward.txt nan) → 0, harbor:invalid_reward`,
    input: { rewardTxt: 'nan' }, reward: 0, kind: 'harbor:invalid_reward' },
  { name: `${SPEC}, outcome "a value that is not a finite number" (reward.txt inf) → 0, harbor:invalid_reward`,
    input: { rewardTxt: 'inf\n' }, reward: 0, kind: 'harbor:invalid_reward' },
  { name: `${SPEC}, outcome "a value that is not a finite number" (reward.txt 1e999) → 0, harbor:invalid_reward`,
    input: { rewardTxt: '1e999' }, reward: 0, kind: 'harbor:invalid_reward', reasonHas: 'not a finite number' },
  { name: `${SPEC}, outcome "a value that is not a finite number" (reward.json 1e999) → 0, harbor:invalid_reward`,
    input: { rewardJson: '{"reward": 1e999}' }, reward: 0, kind: 'harbor:invalid_reward', reasonHas: '"reward" is not a finite number' },
  { name: `${SPEC}, outcome "a value that is not a finite number" (reward.json string value) → 0, harbor:invalid_reward`,
    input: { rewardJson: '{"reward": "0.5"}' }, reward: 0, kind: 'harbor:invalid_reward', reasonHas: 'key "reward" is the string "0.5"' },
  { name: `${SPEC}, outcome "a value that is not a finite number" (reward.json null value) → 0, harbor:invalid_reward`,
    input: { rewardJson: '{"reward": 1, "acc": null}' }, reward: 0, kind: 'harbor:invalid_reward', reasonHas: 'key "acc" is null' },
  { name: `${SPEC}, outcome "a value that is not a finite number" (reward.json nested object) → 0, harbor:invalid_reward`,
    input: { rewardJson: '{"reward": {"x": 1}}' }, reward: 0, kind: 'harbor:invalid_reward', reasonHas: 'key "reward"' },
  // Outcome table, row 2: components with no finite sum.
  { name: `${SPEC}, outcome "components with no finite sum" → 0, harbor:invalid_reward`,
    input: { rewardJson: '{"a": 1e308, "b": 1e308}' }, reward: 0, kind: 'harbor:invalid_reward', reasonHas: 'no finite sum' },
  // Outcome table, row 3.
  { name: `${SPEC}, outcome "test.sh runs past timeout_sec … without writing a reward" → 0, harbor:verifier_timeout`,
    input: { timedOut: true }, reward: 0, kind: 'harbor:verifier_timeout', masked: false, reasonHas: 'timed out' },
  { name: `${SPEC}, outcome row 3 with a reward.json cut off by the kill → 0, harbor:verifier_timeout (problem kept)`,
    input: { timedOut: true, rewardJson: '{"rew' }, reward: 0, kind: 'harbor:verifier_timeout', reasonHas: 'not valid JSON' },
  // "a reward written before a timeout still stands".
  { name: `${SPEC}, "a reward written before a timeout still stands" (reward.txt)`,
    input: { timedOut: true, rewardTxt: '0.75\n' }, reward: 0.75, rewards: { reward: 0.75 } },
  { name: `${SPEC}, "a reward written before a timeout still stands" (reward.json)`,
    input: { timedOut: true, rewardJson: '{"reward": 1, "t": 3}' }, reward: 1, rewards: { reward: 1, t: 3 } },
  // Well-formed files.
  { name: `${SPEC}, "reward.txt holds one number, which is the reward"`,
    input: { rewardTxt: ' 0.5\n' }, reward: 0.5, rewards: { reward: 0.5 } },
  { name: `${SPEC}, "reward.txt holds one number" (negative zero is 0)`,
    input: { rewardTxt: '-0' }, reward: 0, rewards: { reward: 0 } },
  { name: `${SPEC}, "reward.txt holds one number" (integer, exponent, sign)`,
    input: { rewardTxt: '-1.5e-1' }, reward: -0.15, rewards: { reward: -0.15 } },
  { name: `${SPEC}, "A reward key is the score, and the other keys are metrics"`,
    input: { rewardJson: '{"reward": 0.25, "accuracy": 0.9, "steps": 12}' },
    reward: 0.25, rewards: { reward: 0.25, accuracy: 0.9, steps: 12 } },
  { name: `${SPEC}, "Without a reward key, every key is a component: the score is their sum"`,
    input: { rewardJson: '{"correctness": 1, "performance": 0.5}' },
    reward: 1.5, rewards: { correctness: 1, performance: 0.5 }, components: { correctness: 1, performance: 0.5 } },
  { name: `${SPEC}, one component alone is its own sum`,
    input: { rewardJson: '{"acc": 0.4}' }, reward: 0.4, rewards: { acc: 0.4 }, components: { acc: 0.4 } },
  { name: `${SPEC}, "booleans count as numbers" (reward key)`,
    input: { rewardJson: '{"reward": true, "safe": false}' }, reward: 1, rewards: { reward: 1, safe: 0 } },
  { name: `${SPEC}, "booleans count as numbers" (components)`,
    input: { rewardJson: '{"a": true, "b": true, "c": false}' }, reward: 2, rewards: { a: 1, b: 1, c: 0 }, components: { a: 1, b: 1, c: 0 } },
  { name: `${SPEC}, "reward.json wins whenever it exists" over a valid reward.txt`,
    input: { rewardJson: '{"reward": 0.2}', rewardTxt: '1' }, reward: 0.2, rewards: { reward: 0.2 } },
  { name: `${SPEC}, "reward.json wins whenever it exists, even when it is malformed"`,
    input: { rewardJson: 'oops', rewardTxt: '1' }, reward: 0, kind: 'harbor:invalid_reward', reasonHas: 'reward.json' },
  { name: `${SPEC}, "reward.json wins … even when it is malformed" (empty reward.json beside reward.txt)`,
    input: { rewardJson: '', rewardTxt: '1' }, reward: 0, kind: 'harbor:invalid_reward', reasonHas: 'reward.json is empty' },
  { name: `${SPEC}, a key named __proto__ is an ordinary metric`,
    input: { rewardJson: '{"reward": 1, "__proto__": 2}' }, reward: 1, rewards: JSON.parse('{"reward": 1, "__proto__": 2}') },
  // Task Folder Verifiers § How the verifier runs: test.sh that never starts is masked.
  { name: 'Task Folder Verifiers § How the verifier runs, "test.sh never starts … masked, as verifier_error"',
    input: { startFailed: { reason: 'bash: not found' } }, reward: 0, kind: 'verifier_error', masked: true, reasonHas: 'bash: not found' },
  { name: 'Task Folder Verifiers § How the verifier runs, a start failure masks even beside a leftover reward file',
    input: { startFailed: { reason: 'exec refused' }, rewardTxt: '1' }, reward: 0, kind: 'verifier_error', masked: true },
];

describe('scoreVerifierOutput', () => {
  it.each(rows.map((r) => [r.name, r] as const))('%s', (_name, row) => {
    const out = scoreVerifierOutput({ ...base, ...row.input });
    expect(out.reward).toBeCloseTo(row.reward, 12);
    expect(out.failure_kind).toBe(row.kind);
    expect(out.masked).toBe(row.masked ?? false);
    if (row.kind) {
      expect(out.verifier_rewards).toEqual({});
      expect(out.failure_reason).toContain('tail of test-stdout.txt: grading…');
      if (row.reasonHas) expect(out.failure_reason).toContain(row.reasonHas);
    } else {
      expect(out.failure_reason).toBeUndefined();
      expect(out.verifier_rewards).toEqual(row.rewards);
    }
    expect(out.reward_components).toEqual(row.components);
  });

  it(`${SPEC}, "The exit code of test.sh does not affect the score": the input has no exit code`, () => {
    // An exit code passed by mistake is ignored, not read.
    const withExit = { ...base, rewardTxt: '1', exitCode: 1 } as VerifierOutput;
    expect(scoreVerifierOutput(withExit)).toEqual(scoreVerifierOutput({ ...base, rewardTxt: '1' }));
  });
});

describe('failure_reason', () => {
  it('carries the problem and a bounded tail of test-stdout.txt', () => {
    const stdout = 'x'.repeat(5000) + 'THE END';
    const out = scoreVerifierOutput({ timedOut: false, testStdoutTail: stdout });
    expect(out.failure_reason!.length).toBeLessThanOrEqual(FAILURE_REASON_MAX_CHARS);
    expect(out.failure_reason).toMatch(/^test\.sh wrote neither/);
    expect(out.failure_reason).toMatch(/THE END$/);
  });

  it('says when there is no test-stdout.txt or it is empty', () => {
    expect(failureReason('p', undefined)).toBe('p; tail of test-stdout.txt: (no test-stdout.txt)');
    expect(failureReason('p', '  \n')).toBe('p; tail of test-stdout.txt: (test-stdout.txt is empty)');
  });

  it('stays bounded when the problem itself is huge', () => {
    const r = failureReason('p'.repeat(10_000), 'log end');
    expect(r.length).toBeLessThanOrEqual(FAILURE_REASON_MAX_CHARS);
    expect(r.startsWith('ppp')).toBe(true);
    expect(r.endsWith('log end')).toBe(true);
  });

  it('tailOf keeps the end and marks the cut', () => {
    expect(tailOf('abcdef', 3)).toBe('…def');
    expect(tailOf('abc', 3)).toBe('abc');
  });
});

describe('startFailed kinds (Task Folder Verifiers § How the verifier runs)', () => {
  it('"as provider_unavailable for the other three" (tar, gzip, find missing) → masked', () => {
    const out = scoreVerifierOutput({ timedOut: false, startFailed: { reason: 'tar: not found', kind: 'provider_unavailable' } });
    expect(out).toMatchObject({ reward: 0, failure_kind: 'provider_unavailable', masked: true });
  });
});

describe('verifierOutputFromFiles', () => {
  it('picks the reward files and test-stdout.txt out of the copied folder', () => {
    const files = new Map<string, Buffer | string>([
      ['reward.json', Buffer.from('{"reward": 1}')],
      ['reward.txt', '0'],
      ['test-stdout.txt', Buffer.from('ok\n')],
      ['other.log', 'x'],
    ]);
    expect(verifierOutputFromFiles(files, { timedOut: false })).toEqual({
      timedOut: false,
      rewardJson: '{"reward": 1}',
      rewardTxt: '0',
      testStdoutTail: 'ok\n',
    });
    expect(scoreVerifierOutput(verifierOutputFromFiles(files, { timedOut: false })).reward).toBe(1);
  });

  it('keeps an empty file as present (so it is invalid, not missing)', () => {
    const out = verifierOutputFromFiles(new Map([['reward.txt', Buffer.alloc(0)]]), { timedOut: false });
    expect(out.rewardTxt).toBe('');
    expect(scoreVerifierOutput(out).failure_kind).toBe('harbor:invalid_reward');
  });

  it('TIMEOUT_EXIT_CODES are those of GNU timeout', () => {
    expect(TIMEOUT_EXIT_CODES).toEqual([124, 137]);
  });
});

describe('reward rules as properties', () => {
  const finiteDouble = fc.double({ noNaN: true, noDefaultInfinity: true, min: -1e6, max: 1e6 });
  const key = fc.string({ minLength: 1, maxLength: 8 }).filter((k) => k !== 'reward');

  it(`${SPEC}: any finite number in reward.txt is the reward`, () => {
    fc.assert(
      fc.property(finiteDouble, fc.boolean(), (n, timedOut) => {
        const out = scoreVerifierOutput({ timedOut, rewardTxt: `${String(n)}\n` });
        expect(out.failure_kind).toBeUndefined();
        expect(out.reward).toBe(n === 0 ? 0 : n);
        expect(Object.is(out.reward, -0)).toBe(false);
      }),
    );
  });

  it(`${SPEC}: without a reward key the score is the sum of the components`, () => {
    fc.assert(
      fc.property(fc.dictionary(key, finiteDouble, { minKeys: 1, maxKeys: 6 }), (dict) => {
        const out = scoreVerifierOutput({ timedOut: false, rewardJson: JSON.stringify(dict) });
        const expected = Object.values(dict).reduce((a, b) => a + b, 0);
        expect(out.reward).toBeCloseTo(expected, 6);
        expect(out.reward_components).toEqual(out.verifier_rewards);
        expect(Object.keys(out.verifier_rewards).sort()).toEqual(Object.keys(dict).sort());
      }),
    );
  });

  it(`${SPEC}: with reward.json present, reward.txt never matters`, () => {
    fc.assert(
      fc.property(fc.string(), fc.option(fc.string(), { nil: undefined }), (json, txt) => {
        const a = scoreVerifierOutput({ timedOut: false, rewardJson: json, rewardTxt: txt });
        const b = scoreVerifierOutput({ timedOut: false, rewardJson: json });
        expect(a).toEqual(b);
      }),
    );
  });

  it('every outcome is either a finite reward without a kind, or 0 with a kind', () => {
    fc.assert(
      fc.property(
        fc.option(fc.string(), { nil: undefined }),
        fc.option(fc.string(), { nil: undefined }),
        fc.boolean(),
        (json, txt, timedOut) => {
          const out = scoreVerifierOutput({ timedOut, rewardJson: json, rewardTxt: txt });
          expect(Number.isFinite(out.reward)).toBe(true);
          if (out.failure_kind) expect(out.reward).toBe(0);
          expect(out.masked).toBe(false);
        },
      ),
    );
  });
});
