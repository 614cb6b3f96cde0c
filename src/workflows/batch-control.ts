// Live control of a running batch (berth pause | resume | resize): the update names and the one rule for a
// concurrency window. Plain data and pure functions: the client imports this module too.

export const BATCH_UPDATES = { pause: 'pause', resume: 'resume', resize: 'resize' } as const;

/** Why a concurrency window is refused, or null when it is a whole number ≥ 1. */
export function concurrencyProblem(value: unknown): string | null {
  if (typeof value === 'number' && Number.isInteger(value) && value >= 1) return null;
  return `the concurrency window must be a whole number ≥ 1, got ${JSON.stringify(value)}; e.g. berth resize BATCH 4`;
}

/** What the batch is told to do now; carried across continue-as-new. */
export interface BatchControl {
  paused: boolean;
  concurrency: number;
}
