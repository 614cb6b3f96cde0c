// The last turn's verification records its outcome before handing the sandbox to removal, so a retried attempt
// (the worker died before reporting) returns the graded outcome instead of masking it on a sandbox already gone.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { verifyThenTearDown } from '../../src/activities/final-verify.ts';
import type { TurnOutcome } from '../../src/workflows/types.ts';

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
const turnDir = () => { const d = mkdtempSync(join(tmpdir(), 'berth-final-')); dirs.push(d); return d; };
const graded = (reward: number): TurnOutcome => ({ step: 's', reward, verifier_rewards: { reward }, failure_kind: null, failure_reason: null, masked: false, response_text: '', timings: {} });

describe('verifyThenTearDown', () => {
  it('verifies, records, then tears down, in that order', async () => {
    const order: string[] = [];
    const dir = turnDir();
    const out = await verifyThenTearDown(dir, async () => { order.push('verify'); return graded(1); }, () => order.push(existsSync(join(dir, 'verify-outcome.json')) ? 'teardown after record' : 'teardown before record'));
    expect(out.reward).toBe(1);
    expect(order).toEqual(['verify', 'teardown after record']);
  });

  it('a retry after the sandbox went returns the recorded outcome and does not verify again', async () => {
    const dir = turnDir();
    await verifyThenTearDown(dir, async () => graded(0.5), () => undefined);
    let verified = false;
    let tornDown = 0;
    const again = await verifyThenTearDown(dir, async () => { verified = true; return graded(0); }, () => { tornDown++; });
    expect(again.reward).toBe(0.5);
    expect(verified).toBe(false);
    expect(tornDown).toBe(1);
  });

  it('a verification that throws records nothing and tears nothing down (the workflow tears down)', async () => {
    const dir = turnDir();
    let tornDown = false;
    await expect(verifyThenTearDown(dir, async () => { throw new Error('bug'); }, () => { tornDown = true; })).rejects.toThrow('bug');
    expect(tornDown).toBe(false);
    expect(existsSync(join(dir, 'verify-outcome.json'))).toBe(false);
  });
});
