// Every `${VAR}` a task reads, checked before any sandbox starts (Task Folder Verifiers § Environment
// variables and secrets: "A missing required value fails the episode before any sandbox starts"; secrets fill
// `${NAME}` in [verifier].env and [steps.verifier].env only; docs/design.md section 7, Secrets).
import { describe, expect, it } from 'vitest';
import { envTablesOf, firstUnsetVariable, unsetVariableMessage, type UnsetVariable } from '../../src/task/index.ts';
import { build, expectTask } from './helpers.ts';

const SEPARATE = '[verifier.environment]\ndocker_image = "v:1"\n[verifier.environment.env]\nVE = "${VE_VAR}"\n';
const MULTI = [
  '[verifier.env]', 'SHARED = "${SHARED_VAR}"',
  '[[steps]]', 'name = "one"', '[steps.verifier.env]', 'OWN = "${STEP_VAR}"',
  '[[steps]]', 'name = "two"',
].join('\n');
const multiFiles = { 'instruction.md': undefined, 'steps/one/instruction.md': 'a\n', 'steps/two/instruction.md': 'b\n' };

function unset(toml: string, env: Record<string, string>, secrets: Record<string, string> = {}, opts = { solution: false }, files = {}): UnsetVariable | null {
  const task = expectTask(build({ 'task.toml': toml, ...files }));
  return firstUnsetVariable(envTablesOf(task, opts), env, secrets);
}

describe('the first unset variable of a task, by table, key and variable', () => {
  const rows: Array<[string, string, Record<string, string>, Record<string, string>, Partial<UnsetVariable> | null]> = [
    ['[environment].env', '[environment.env]\nTOKEN = "${ENV_VAR}"\n', {}, {}, { table: '[environment].env', key: 'TOKEN', variable: 'ENV_VAR', secrets: false }],
    ['[environment].env is not filled by [secrets]', '[environment.env]\nTOKEN = "${ENV_VAR}"\n', {}, { ENV_VAR: 's' }, { table: '[environment].env' }],
    ['[verifier].env', '[verifier.env]\nJUDGE = "${JUDGE_KEY}"\n', {}, {}, { table: '[verifier].env', key: 'JUDGE', variable: 'JUDGE_KEY', secrets: true }],
    ['[verifier].env is filled by [secrets]', '[verifier.env]\nJUDGE = "${JUDGE_KEY}"\n', {}, { JUDGE_KEY: 's' }, null],
    ['[verifier].env is filled by the worker\'s environment', '[verifier.env]\nJUDGE = "${JUDGE_KEY}"\n', { JUDGE_KEY: 'h' }, {}, null],
    ['set but empty counts as set', '[verifier.env]\nJUDGE = "${JUDGE_KEY}"\n', { JUDGE_KEY: '' }, {}, null],
    ['a default never blocks', '[environment.env]\nA = "${NOPE:-x}"\n[verifier.env]\nB = "${NOPE:-}"\n', {}, {}, null],
    ['a value that is not a whole template is literal', '[environment.env]\nA = "pre ${NOPE}"\n', {}, {}, null],
    ['[verifier.environment].env, not filled by [secrets]', SEPARATE, {}, { VE_VAR: 's' }, { table: '[verifier.environment].env', key: 'VE', variable: 'VE_VAR', secrets: false }],
    ['[verifier.environment].env from the worker\'s environment', SEPARATE, { VE_VAR: 'h' }, {}, null],
  ];
  it.each(rows)('%s', (_name, toml, env, secrets, want) => {
    const got = unset(toml, env, secrets);
    if (want === null) expect(got).toBeNull();
    else expect(got).toMatchObject(want);
  });

  it('a multi-step task: [verifier].env under every step, then each step\'s own keys, named by step', () => {
    expect(unset(MULTI, {}, {}, undefined, multiFiles)).toMatchObject({ table: '[verifier].env', key: 'SHARED', variable: 'SHARED_VAR' });
    expect(unset(MULTI, { SHARED_VAR: '1' }, {}, undefined, multiFiles)).toMatchObject({ table: '[steps.verifier].env of step "one"', key: 'OWN', variable: 'STEP_VAR', secrets: true });
    expect(unset(MULTI, {}, { SHARED_VAR: '1', STEP_VAR: '2' }, undefined, multiFiles)).toBeNull();
  });

  // issue 12 × issue 14: a separate step's own verifier environment, and the task's [verifier.environment] the
  // steps of a multi-step task inherit (nemo_gym.data.tasks.harbor.verifier_env, step_verifier_environment).
  it('a separate step\'s [steps.verifier.environment].env, and an inherited [verifier.environment].env, named as task.toml names them', () => {
    const stepOwn = [
      '[[steps]]', 'name = "one"', '[[steps]]', 'name = "two"',
      '[steps.verifier.environment]', 'docker_image = "v:1"', '[steps.verifier.environment.env]', 'JUDGE = "${STEP_JUDGE}"',
    ].join('\n');
    expect(unset(stepOwn, {}, { STEP_JUDGE: 's' }, undefined, multiFiles))
      .toMatchObject({ table: '[steps.verifier.environment].env of step "two"', key: 'JUDGE', variable: 'STEP_JUDGE', secrets: false });
    expect(unset(stepOwn, { STEP_JUDGE: 'h' }, {}, undefined, multiFiles)).toBeNull();
    const inherited = [
      SEPARATE, '[[steps]]', 'name = "one"', '[[steps]]', 'name = "two"',
    ].join('\n');
    expect(unset(inherited, {}, {}, undefined, multiFiles)).toMatchObject({ table: '[verifier.environment].env', key: 'VE', variable: 'VE_VAR' });
  });

  it('[solution].env only when the oracle runs', () => {
    const toml = '[solution.env]\nS = "${SOLUTION_VAR}"\n';
    expect(unset(toml, {}, {}, { solution: false })).toBeNull();
    expect(unset(toml, {}, {}, { solution: true })).toMatchObject({ table: '[solution].env', key: 'S', variable: 'SOLUTION_VAR' });
  });

  it('the message names the table, the key and the variable, and where to set it; never a value', () => {
    expect(unsetVariableMessage({ table: '[verifier].env', key: 'JUDGE', variable: 'JUDGE_KEY', secrets: true }))
      .toBe('[verifier].env JUDGE reads ${JUDGE_KEY}, which is set neither in [secrets] of berth.toml nor in the worker\'s environment; set it there, or give it a default with ${JUDGE_KEY:-value}');
    expect(unsetVariableMessage({ table: '[environment].env', key: 'T', variable: 'V', secrets: false })).toContain('which is not set in the worker\'s environment');
  });
});
