// DESIGN.md §4: one module lists every failure kind. Workflow code may import src/verify only as types, so the
// workflow keeps its own list of masking kinds; this pins the two together.
import { describe, expect, it } from 'vitest';
import { MASKING_KINDS } from '../../src/workflows/failures.ts';
import { ALL_FAILURE_KINDS, isMasked } from '../../src/outcomes/failure-kinds.ts';

describe('failure kinds agree across modules', () => {
  it("the workflow's MASKING_KINDS are exactly the masked kinds of src/verify/failure-kinds.ts", () => {
    expect([...MASKING_KINDS].sort()).toEqual(ALL_FAILURE_KINDS.filter(isMasked).sort());
  });
});
