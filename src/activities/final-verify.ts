import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { TurnOutcome } from './types.ts';

const RECORD = 'verify-outcome.json';

/**
 * The last turn's verification, then the sandbox handed to removal (so the episode needs no teardown activity).
 * The outcome is written beside the turn's logs before the sandbox goes, so an attempt retried after that (the
 * worker died before reporting) returns it instead of finding the sandbox gone and masking a graded turn.
 */
export async function verifyThenTearDown(
  turnDir: string, verify: () => Promise<TurnOutcome>, tearDown: () => unknown, keepState?: () => Promise<void>,
): Promise<TurnOutcome> {
  const file = join(turnDir, RECORD);
  let outcome: TurnOutcome;
  if (existsSync(file)) {
    outcome = JSON.parse(readFileSync(file, 'utf8')) as TurnOutcome;
  } else {
    // --keep-final-state: the state the agent left, before verification writes into the sandbox.
    await keepState?.();
    outcome = await verify();
    writeFileSync(`${file}.tmp`, JSON.stringify(outcome));
    renameSync(`${file}.tmp`, file);
  }
  await tearDown();
  return outcome;
}
