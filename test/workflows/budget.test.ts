import { describe, expect, it } from 'vitest';
import { episodeBudget, type BudgetInput } from '../../src/workflows/budget.ts';

const base: BudgetInput = {
  turns: [{ agentSec: 1000, verifierSec: 200, collectSec: 0 }],
  setupPerTurnSec: 60, sandboxReadySec: 900, buildTimeoutSec: 0, pullAttempts: 1, readyGraceSec: 60,
  defaultEpisodeSec: 21600, enforceTaskTimeouts: true,
};

// multi-step-tasks.md § Episode time budget.
describe('episode budget', () => {
  it('sums every turn: setup, agent, collect hooks and verifier', () => {
    const b = episodeBudget({ ...base, turns: [{ agentSec: 100, verifierSec: 50, collectSec: 10 }, { agentSec: 200, verifierSec: 50, collectSec: 10 }] });
    expect(b).toMatchObject({ turnsSec: 60 + 160 + 60 + 260, nominalSec: 540 + 900, worstSec: 540 + 960 });
  });

  it.each([
    ['enforced, within the default: the default is the deadline, no warning', true, 21600, 21600, false],
    ['enforced, above the default: the worst case is the deadline, with a warning', true, 1000, 1000 + 960 + 260, true],
  ] as const)('%s', (_n, enforce, defaultSec, deadline, warns) => {
    const b = episodeBudget({ ...base, enforceTaskTimeouts: enforce, defaultEpisodeSec: defaultSec, turns: [{ agentSec: 1000, verifierSec: 200, collectSec: 0 }] });
    expect(b.ok).toBe(true);
    if (!b.ok) return;
    expect(b.deadlineSec).toBe(deadline);
    expect(b.warning !== null).toBe(warns);
  });

  it('not enforced: a task whose nominal episode does not fit the default is refused, naming the setting and both figures', () => {
    const b = episodeBudget({ ...base, enforceTaskTimeouts: false, defaultEpisodeSec: 1500 });
    expect(b.ok).toBe(false);
    if (b.ok) return;
    expect(b.reason).toContain('default_timeout_seconds is 1500');
    expect(b.reason).toContain(`${1260 + 900}`);
    expect(b.reason).toContain(`${1260 + 960}`);
    expect(b.reason).toContain('enforce_task_timeouts = true');
  });

  it('not enforced: fits only without a retried seed runs with a warning', () => {
    const b = episodeBudget({ ...base, enforceTaskTimeouts: false, defaultEpisodeSec: 2200 });
    expect(b).toMatchObject({ ok: true, deadlineSec: 2200 });
    if (b.ok) expect(b.warning).toContain('retries its image pulls');
  });

  it('overlay RUN lines add their build budget to every figure', () => {
    const b = episodeBudget({ ...base, buildTimeoutSec: 600 });
    expect(b).toMatchObject({ nominalSec: 1260 + 900 + 600, worstSec: 1260 + 600 + 960 });
  });
});
