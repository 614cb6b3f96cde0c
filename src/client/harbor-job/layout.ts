// Where an episode's logs land in its trial folder. Berth keeps a single-step task's turn under turn-1/ and a
// multi-step task's under steps/<name>/ (as Harbor does); Harbor keeps a single-step trial's agent/, verifier/ and
// artifacts/ at the trial's root. Pure.

/** Records a host keeps for its own retries (seed-record.ts, final-verify.ts): Berth's, so under berth/ wherever they sit. */
const RUN_RECORDS = new Set(['seeded-sandbox.json', 'verify-outcome.json']);

/** The path in the trial folder for a path in the episode's logs folder, or null for one never to be written. */
export function trialPathOf(episodePath: string): string | null {
  const parts = episodePath.replace(/\\/g, '/').split('/').filter((p) => p !== '' && p !== '.');
  if (parts.length === 0 || parts.includes('..')) return null;
  if (RUN_RECORDS.has(parts[parts.length - 1]!)) return ['berth', ...parts].join('/');
  const turn = /^turn-(\d+)$/.exec(parts[0]!);
  if (turn) {
    if (parts.length === 1) return null;
    return turn[1] === '1' ? parts.slice(1).join('/') : ['berth', ...parts].join('/');
  }
  // Harbor's own names at the root are the trial's: an episode file of that name goes beside Berth's others.
  if (parts.length === 1 && ['config.json', 'result.json', 'trial.log', 'lock.json'].includes(parts[0]!)) return `berth/${parts[0]}`;
  return parts.join('/');
}
