// One home for each rule (docs/design.md sections 4 and 6): the workflows' lists and the activities' mapping derive from
// the table of src/outcomes; this pins the derived lists to the flags, kind by kind, and finds any kind name kept
// by hand elsewhere in src.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ApplicationFailure } from '@temporalio/common';
import {
  ALL_FAILURE_KINDS, FAILURE_KINDS, FINAL_ERROR_TYPES, MASKING_KINDS, TASK_ERROR_TYPES, isFailureKind,
} from '../../src/outcomes/index.ts';
import * as workflowFailures from '../../src/workflows/failures.ts';
import { outcomeFailure } from '../../src/activities/failures.ts';

const src = join(import.meta.dirname, '..', '..', 'src');

describe('lists derived from the failure-kind table', () => {
  it.each(ALL_FAILURE_KINDS.map((k) => [k, FAILURE_KINDS[k].masked, FAILURE_KINDS[k].retryable] as const))(
    '%s (masked=%s, retryable=%s) is in exactly the lists its flags say',
    (kind, masked) => {
      const mayMask = masked !== false;
      expect(MASKING_KINDS.includes(kind)).toBe(mayMask);
      expect(FINAL_ERROR_TYPES.includes(kind)).toBe(mayMask);
      const failure = outcomeFailure(kind, 'why');
      expect(failure).toBeInstanceOf(ApplicationFailure);
      expect({ type: failure.type, nonRetryable: failure.nonRetryable }).toEqual({ type: kind, nonRetryable: mayMask });
    },
  );

  it.each(TASK_ERROR_TYPES.map((t) => [t]))('task error %s is final and is not a row kind', (type) => {
    expect(FINAL_ERROR_TYPES).toContain(type);
    expect(isFailureKind(type)).toBe(false);
    expect(outcomeFailure(type, 'why').nonRetryable).toBe(true);
  });

  it('the workflows use the same lists, not copies', () => {
    expect(workflowFailures.MASKING_KINDS).toBe(MASKING_KINDS);
    expect(workflowFailures.TASK_ERROR_TYPES).toBe(TASK_ERROR_TYPES);
    expect(workflowFailures.FINAL_ERROR_TYPES).toBe(FINAL_ERROR_TYPES);
  });

  it('every failure-kind-shaped name written in src outside src/outcomes is a kind of the table', () => {
    const files = (readdirSync(src, { recursive: true }) as string[]).filter((f) => f.endsWith('.ts') && !f.startsWith('outcomes'));
    const unknown: string[] = [];
    for (const f of files) {
      for (const m of readFileSync(join(src, f), 'utf8').matchAll(/'((?:harbor|agent):[a-z_]+)'/g)) {
        if (!isFailureKind(m[1])) unknown.push(`${f}: ${m[1]}`);
      }
    }
    expect(unknown).toEqual([]);
  });
});
