// nemo_gym.data.tasks.harbor.verifier_env: step_verifier_mode, step_verifier_environment and
// step_verifier_build_context, row by row (Harbor's resolve_step_verifier_mode and
// resolve_effective_verifier_env_config at v0.22.0).
import { describe, expect, it } from 'vitest';
import { stepVerifierBuildContext, stepVerifierEnvironment, stepVerifierMode, taskVerifierMode } from '../../src/task/verifier-mode.ts';
import { build, expectTask } from './helpers.ts';

type Tables = { environment_mode?: 'shared' | 'separate'; environment?: string };
const SEP = { environment_mode: 'separate' } as const;
const SHARED = { environment_mode: 'shared' } as const;

describe('step_verifier_mode: the step\'s explicit mode, else separate for a step environment, else the task\'s', () => {
  const rows: Array<[string, Tables, Tables, 'shared' | 'separate']> = [
    ['nothing anywhere: shared', {}, {}, 'shared'],
    ['the task is separate by its mode: the step inherits it', SEP, {}, 'separate'],
    ['the task is separate by [verifier.environment]: the step inherits it', { environment: 'task-env' }, {}, 'separate'],
    ['the task is explicitly shared: the step inherits it', SHARED, {}, 'shared'],
    ['a step environment makes the step separate under a shared task', SHARED, { environment: 'step-env' }, 'separate'],
    ['a step environment makes the step separate under a task with nothing', {}, { environment: 'step-env' }, 'separate'],
    ['the step\'s explicit shared wins over a separate task', SEP, SHARED, 'shared'],
    ['the step\'s explicit shared wins over [verifier.environment]', { environment: 'task-env' }, SHARED, 'shared'],
    ['the step\'s explicit separate wins over a shared task', SHARED, SEP, 'separate'],
    ['an explicit separate task mode beside a step environment: separate', SEP, { environment: 'step-env' }, 'separate'],
  ];
  it.each(rows)('%s', (_name, task, step, want) => {
    expect(stepVerifierMode(task, step)).toBe(want);
  });

  it('the task\'s own mode (is_shared_verifier): explicit, else separate with [verifier.environment], else shared', () => {
    expect(taskVerifierMode({})).toBe('shared');
    expect(taskVerifierMode(SEP)).toBe('separate');
    expect(taskVerifierMode({ environment: 'x' })).toBe('separate');
    expect(taskVerifierMode(SHARED)).toBe('shared');
  });
});

describe('step_verifier_environment: [steps.verifier.environment], else [verifier.environment], else a copy of [environment]', () => {
  const rows: Array<[string, Tables, Tables | null, { table: string; source: string } | null]> = [
    ['a shared step has none', {}, {}, null],
    ['the step\'s own table first', { environment: 'task-env' }, { environment: 'step-env' }, { table: 'step-env', source: 'step' }],
    ['else the task\'s [verifier.environment]', { environment: 'task-env' }, {}, { table: 'task-env', source: 'verifier' }],
    ['else a copy of [environment] (mode-only separate)', SEP, {}, { table: 'agent-env', source: 'environment' }],
    ['a step that says separate with no table of its own takes the task\'s table', { environment: 'task-env' }, SEP, { table: 'task-env', source: 'verifier' }],
    ['a step made shared has none, whatever the task declares', { environment: 'task-env' }, SHARED, null],
    ['single-step (no step): the task\'s rule', { environment: 'task-env' }, null, { table: 'task-env', source: 'verifier' }],
  ];
  it.each(rows)('%s', (_name, verifier, step, want) => {
    expect(stepVerifierEnvironment({ environment: 'agent-env', verifier }, step)).toEqual(want);
  });
});

describe('step_verifier_build_context: steps/<name>/tests/ when that folder exists, else the task\'s tests/', () => {
  it.each([
    [['tests', 'steps/a/tests'], 'a', 'steps/a/tests'],
    [['tests', 'steps/b/tests'], 'a', 'tests'],
    [[], 'a', 'tests'],
  ] as const)('%j, step %s → %s', (dirs, step, want) => {
    expect(stepVerifierBuildContext(new Set(dirs), step)).toBe(want);
  });
});

describe('the loader applies the rules to each step of one task (a task may mix shared and separate steps)', () => {
  const files = {
    'task.toml': [
      '[verifier]', 'environment_mode = "separate"',
      '[environment]', 'docker_image = "agent:1"',
      '[[steps]]', 'name = "inherits"',
      '[[steps]]', 'name = "shared"', '[steps.verifier]', 'environment_mode = "shared"',
      '[[steps]]', 'name = "own-env"', '[steps.verifier.environment]', 'workdir = "/w"',
      '[[steps]]', 'name = "own-tests"', '[steps.verifier.environment]', 'docker_image = "v:2"',
    ].join('\n'),
    'tests/test.sh': 'x', 'tests/Dockerfile': 'FROM t',
    ...Object.fromEntries(['inherits', 'shared', 'own-env', 'own-tests'].map((n) => [`steps/${n}/instruction.md`, n])),
    'steps/own-env/tests/Dockerfile': 'FROM s',
  };
  const t = expectTask(build(files));
  const [inherits, shared, ownEnv, ownTests] = t.steps;

  it('mode per step', () => {
    expect(t.steps.map((s) => s.verifier.mode)).toEqual(['separate', 'shared', 'separate', 'separate']);
    expect(t.verifier.mode).toBe('separate');
  });

  it('a step inheriting mode-only separate grades in a copy of [environment]: its docker_image', () => {
    expect(inherits!.verifier.environment!.docker_image).toBe('agent:1');
    expect(inherits!.verifier.image).toEqual({ kind: 'prebuilt', ref: 'agent:1' });
  });

  it('a shared step has no verifier environment or image', () => {
    expect(shared!.verifier.environment).toBeNull();
    expect(shared!.verifier.image).toBeNull();
  });

  it('a step environment without docker_image is built from the step\'s own tests/ (step_verifier_build_context)', () => {
    expect(ownEnv!.verifier.environment!.workdir).toBe('/w');
    expect(ownEnv!.verifier.environment!.docker_image).toBeNull();
    expect(ownEnv!.verifier.image).toEqual({ kind: 'build', context: 'steps/own-env/tests', dockerfile: 'steps/own-env/tests/Dockerfile', pinned_image: null });
  });

  it('a step environment with docker_image uses it', () => {
    expect(ownTests!.verifier.image).toEqual({ kind: 'prebuilt', ref: 'v:2' });
  });

  it('a separate step needs no test.sh on the host (its image may ship /tests/test.sh)', () => {
    const u = expectTask(build({ ...files, 'tests/test.sh': undefined, 'tests/helpers.sh': 'h', 'steps/shared/tests/test.sh': 'x' }));
    expect(u.steps[0]!.verifier.script).toBeNull();
  });
});
