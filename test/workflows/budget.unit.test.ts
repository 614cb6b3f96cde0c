import { describe, expect, it } from 'vitest';
import { stepsOf } from '../../src/activities/shared.ts';
import { DEFAULT_EPISODE_SETTINGS } from '../../src/activities/types.ts';
import { build, expectTask } from '../task/helpers.ts';
import { EXEC_OVERHEAD_SEC, VERIFY_PHASES_SEC, episodeBudget, healthcheckWorstSec, seedTimeLimitSec, verifyTimeLimitSec, type BudgetInput, type VerifyTimeInput } from '../../src/activities/budget.ts';

const base: BudgetInput = {
  turns: [{ agentSec: 1000, verifierSec: 200, collectSec: 0 }],
  setupPerTurnSec: 60, sandboxReadySec: 900, buildTimeoutSec: 0, pullAttempts: 1, readyGraceSec: 60,
  defaultEpisodeSec: 21600, enforceTaskTimeouts: true,
};

// Multi-Step Harbor Tasks § Episode time budget.
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

// The verify activity's time limit (issue 12): everything one verification may spend, so that test.sh's own timeout
// (Task Folder Verifiers § Reward files, a scored harbor:verifier_timeout) always comes first.
describe('verify activity time limit', () => {
  const X = EXEC_OVERHEAD_SEC;
  const P = VERIFY_PHASES_SEC;
  const rows: Array<[string, VerifyTimeInput, number]> = [
    ['test.sh alone', { collectSec: [], testSec: 600 }, P + 600 + X],
    ['every collect hook\'s timeout, each with its exec overhead', { collectSec: [60, 300], testSec: 10 }, P + 60 + X + 300 + X + 10 + X],
    ['a separate verifier\'s start and healthcheck', { collectSec: [60], testSec: 10, separate: { startSec: 960, healthcheckSec: 105 } }, P + 60 + X + 960 + 105 + 10 + X],
    ['fractional budgets round up', { collectSec: [0.5], testSec: 1.25 }, Math.ceil(P + 0.5 + X + 1.25 + X)],
  ];
  it.each(rows)('%s', (_name, input, want) => expect(verifyTimeLimitSec(input)).toBe(want));

  it('is always past the collect hooks plus test.sh, whatever they are', () => {
    for (const collectSec of [[], [1], [60, 60, 60], [3600]]) {
      for (const testSec of [1, 600, 7200]) {
        expect(verifyTimeLimitSec({ collectSec, testSec })).toBeGreaterThan(collectSec.reduce((a, b) => a + b, 0) + testSec);
      }
    }
  });

  // Task Folder Format § [environment], healthcheck: after start_period_sec, retries consecutive failures
  // interval_sec apart fail the seed; timeout_sec bounds each attempt.
  it.each([
    ['the defaults (5 s apart, 30 s each, 3 retries, no start period)', { interval_sec: 5, timeout_sec: 30, start_period_sec: 0, retries: 3 }, 0 + 30 + 3 * 35],
    ['a start period', { interval_sec: 1, timeout_sec: 2, start_period_sec: 60, retries: 2 }, 60 + 2 + 2 * 3],
    ['retries = 0 still makes one failing check', { interval_sec: 5, timeout_sec: 10, start_period_sec: 0, retries: 0 }, 10 + 15],
  ])('healthcheck worst case: %s', (_name, hc, want) => expect(healthcheckWorstSec(hc)).toBe(want));
});

// Task Folder Format § [environment], healthcheck (polled at seed): the seed activity's limit covers the check's
// worst case, so a slow service fails the seed as harbor:seed_failed with the check's message, never by a timeout.
describe('seed time limit', () => {
  const slow = { interval_sec: 1, timeout_sec: 2, start_period_sec: 64, retries: 1 };
  it.each([
    ['no healthcheck: the ready timeout with its grace and the build', { readySec: 960, buildSec: 300, healthchecks: [] }, 1260],
    ['a healthcheck adds its worst case and one exec overhead', { readySec: 61, buildSec: 0, healthchecks: [slow] }, 61 + (64 + 2 + 3) + EXEC_OVERHEAD_SEC],
    ['the defaults (5 s apart, 30 s each, 3 retries)', { readySec: 960, buildSec: 0, healthchecks: [{ interval_sec: 5, timeout_sec: 30, start_period_sec: 0, retries: 3 }] }, 960 + 135 + EXEC_OVERHEAD_SEC],
  ])('%s', (_name, input, want) => expect(seedTimeLimitSec(input)).toBe(want));

  it('is always past the ready timeout plus every healthcheck\'s start period and retries', () => {
    for (const start of [0, 60, 3600]) {
      for (const retries of [0, 1, 10]) {
        const hc = { interval_sec: 5, timeout_sec: 10, start_period_sec: start, retries };
        expect(seedTimeLimitSec({ readySec: 61, buildSec: 0, healthchecks: [hc] })).toBeGreaterThan(61 + start + retries * 15);
      }
    }
  });
});

describe('a turn\'s verify time limit', () => {
  it('counts the task\'s collect hooks on every turn and a step\'s own [[steps.verifier.collect]] hooks on its turn', () => {
    const task = expectTask(build({
      'task.toml': '[[verifier.collect]]\ncommand = "true"\ntimeout_sec = 7\n[[steps]]\nname = "one"\n[[steps.verifier.collect]]\ncommand = "true"\ntimeout_sec = 30\n[[steps]]\nname = "two"\n',
      'steps/one/instruction.md': 'a', 'steps/two/instruction.md': 'b',
    }));
    const [one, two] = stepsOf(task, DEFAULT_EPISODE_SETTINGS);
    expect(two!.verifyTimeoutSec).toBe(verifyTimeLimitSec({ collectSec: [7], testSec: 600 }));
    expect(one!.verifyTimeoutSec).toBe(verifyTimeLimitSec({ collectSec: [7, 30], testSec: 600 }));
  });
});
