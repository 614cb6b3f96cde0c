// [[steps]]: Multi-Step Harbor Tasks, each row citing its section.
import { describe, expect, it } from 'vitest';
import { build, expectRefusal, expectTask } from './helpers.ts';

const TWO_STEPS = [
  '[agent]',
  'timeout_sec = 100',
  'user = "agent"',
  '[verifier]',
  'timeout_sec = 50',
  'user = "root"',
  '[verifier.env]',
  'A = "task"',
  'B = "task"',
  '[[steps]]',
  'name = "one"',
  'min_reward = 1.0',
  '[steps.agent]',
  'timeout_sec = 10',
  'user = "other"',
  '[steps.verifier]',
  'timeout_sec = 20',
  '[steps.verifier.env]',
  'B = "step"',
  '[[steps]]',
  'name = "two"',
  'min_reward = { safety = 1, reward = 0.5 }',
].join('\n');

const FILES = {
  'task.toml': TWO_STEPS,
  'instruction.md': 'hidden spec, never sent',
  'tests/test.sh': undefined,
  'steps/one/instruction.md': '<!-- canary x -->\nStep one.',
  'steps/one/tests/test.sh': 'echo 1',
  'steps/one/solution/solve.sh': 'true',
  'steps/two/instruction.md': 'Step two.',
  'steps/two/tests/test.sh': 'echo 1',
};

describe('multi-step tasks', () => {
  it('Multi-Step Harbor Tasks § What runs per turn: steps in order, step instructions (canary dropped), timeouts and users', () => {
    const t = expectTask(build(FILES));
    expect(t.multi_step).toBe(true);
    expect(t.steps.map((s) => s.name)).toEqual(['one', 'two']);
    expect(t.steps[0]!.instruction).toBe('Step one.');
    expect(t.steps[0]!.agent).toEqual({ timeout_sec: 10, user: 'other', network_mode: 'public', allowed_hosts: [] });
    // [steps.agent] falls back to [agent]
    expect(t.steps[1]!.agent).toEqual({ timeout_sec: 100, user: 'agent', network_mode: 'public', allowed_hosts: [] });
  });

  it('docs/design.md section 7: a step verifier timeout is its own, default 600, never [verifier]\'s; user and env layer over [verifier]', () => {
    const t = expectTask(build(FILES));
    expect(t.steps[0]!.verifier.timeout_sec).toBe(20);
    expect(t.steps[1]!.verifier.timeout_sec).toBe(600);
    expect(t.steps[0]!.verifier.user).toBe('root');
    expect(t.steps[0]!.verifier.env).toEqual({ A: 'task', B: 'step' });
    expect(t.steps[1]!.verifier.env).toEqual({ A: 'task', B: 'task' });
  });

  it('Multi-Step Harbor Tasks § Early stop: min_reward as a number or a table', () => {
    const t = expectTask(build(FILES));
    expect(t.steps[0]!.min_reward).toBe(1);
    expect(t.steps[1]!.min_reward).toEqual({ safety: 1, reward: 0.5 });
  });

  it('Multi-Step Harbor Tasks § Verification per step: task tests/ first, the step\'s on top; the step\'s test.sh wins', () => {
    const t = expectTask(build({ ...FILES, 'tests/test.sh': 'shared', 'tests/helpers.sh': 'h', 'steps/two/tests/test.sh': undefined }));
    expect(t.steps[0]!.verifier.tests_dirs).toEqual(['/data/demo/tests', '/data/demo/steps/one/tests']);
    expect(t.steps[0]!.verifier.script).toBe('/data/demo/steps/one/tests/test.sh');
    expect(t.steps[1]!.verifier.tests_dirs).toEqual(['/data/demo/tests']);
    expect(t.steps[1]!.verifier.script).toBe('/data/demo/tests/test.sh');
  });

  it('Multi-Step Harbor Tasks § Per-step reference solutions: own folder, else the task\'s solution/; a folder without solve.sh is that step\'s missing answer', () => {
    const t = expectTask(build({ ...FILES, 'solution/solve.sh': 'task', 'steps/two/solution/notes.txt': 'x' }));
    expect(t.steps[0]!.solution).toEqual({ dir: '/data/demo/steps/one/solution', kind: 'solve_sh', from: 'step' });
    expect(t.steps[1]!.solution).toEqual({ dir: '/data/demo/steps/two/solution', kind: null, from: 'step' });
    const u = expectTask(build({ ...FILES, 'solution/solve.sh': 'task' }));
    expect(u.steps[1]!.solution).toEqual({ dir: '/data/demo/solution', kind: 'solve_sh', from: 'task' });
    const v = expectTask(build({ ...FILES, 'solution/solve.sh': undefined }));
    expect(v.steps[1]!.solution).toBeNull();
  });

  it('Multi-Step Harbor Tasks § What runs per turn: the top-level instruction.md is optional', () => {
    const t = expectTask(build({ ...FILES, 'instruction.md': undefined }));
    expect(t.instruction).toBeNull();
  });

  it('Multi-Step Harbor Tasks § Reward roll-up: multi_step_reward_strategy', () => {
    const t = expectTask(build({ ...FILES, 'task.toml': `multi_step_reward_strategy = "final"\n${TWO_STEPS}` }));
    expect(t.multi_step_reward_strategy).toBe('final');
  });

  it('Task Folder Format § Top level: top-level artifacts are kept for a multi-step task', () => {
    const t = expectTask(build({ ...FILES, 'task.toml': `artifacts = ["/app/x"]\n${TWO_STEPS}` }));
    expect(t.artifacts.map((a) => a.source)).toEqual(['/app/x']);
  });

  it('Multi-Step Harbor Tasks § Per-step agent user: a step\'s users are kept (group users are a seed-time matter)', () => {
    const t = expectTask(build({ ...FILES, 'task.toml': TWO_STEPS.replace('user = "other"', 'user = "1000:1000"') }));
    expect(t.steps[0]!.agent.user).toBe('1000:1000');
  });

  it('[[steps.verifier.collect]] hooks are the step\'s own, after the task\'s (Harbor 0.25 _collect_hooks_for); one naming no service warns', () => {
    const hooks = [
      '[[verifier.collect]]', 'command = "echo task"',
      '[[steps]]', 'name = "one"', '[[steps.verifier.collect]]', 'command = "echo one"', 'timeout_sec = 5', 'user = "agent"',
      '[[steps.verifier.collect]]', 'command = "echo db"', 'service = "db"',
      '[[steps]]', 'name = "two"',
    ].join('\n');
    const warnings: string[] = [];
    const unknown: string[] = [];
    const t = expectTask(build({ ...FILES, 'task.toml': hooks }, { warn: (m) => warnings.push(m), unknownKey: (k) => unknown.push(k) }));
    expect(t.verifier.collect.map((h) => h.command)).toEqual(['echo task']);
    expect(t.steps[0]!.verifier.collect).toEqual([
      { command: 'echo one', service: 'main', timeout_sec: 5, user: 'agent', step: 'one' },
      { command: 'echo db', service: 'db', timeout_sec: 60, user: null, step: 'one' },
    ]);
    expect(t.steps[1]!.verifier.collect).toEqual([]);
    expect(unknown).toEqual([]);
    expect(warnings).toEqual([expect.stringContaining('steps[0].verifier.collect[1].service = "db" (step one) names no service')]);
  });

  it('Harbor 0.25: a steps = [] list is a single-step task', () => {
    const t = build({ 'task.toml': 'steps = []\n' });
    expect(expectTask(t).multi_step).toBe(false);
  });
});

describe('per-step workdir, setup.sh, healthcheck and artifacts (Harbor runs them: Harbor 0.25)', () => {
  const toml = [
    'artifacts = ["/app/task.txt"]',
    '[[steps]]', 'name = "one"', 'artifacts = ["/app/one.txt", { source = "/app/d", destination = "dd", exclude = ["*.log"] }]',
    '[steps.healthcheck]', 'command = "test -f /app/ready"', 'interval_sec = 1', 'retries = 2',
    '[[steps]]', 'name = "two"',
  ].join('\n');
  const files = {
    'task.toml': toml, 'tests/test.sh': 'x',
    'steps/one/instruction.md': 'a', 'steps/one/workdir/config.txt': 'c', 'steps/one/workdir/setup.sh': 'true',
    'steps/two/instruction.md': 'b', 'steps/two/setup.sh': 'outside workdir: Harbor never runs it',
  };

  it('steps/<name>/workdir/ and its setup.sh (only workdir/setup.sh is a setup script)', () => {
    const t = expectTask(build(files));
    expect(t.steps[0]!.workdir).toBe('/data/demo/steps/one/workdir');
    expect(t.steps[0]!.setup_script).toBe(true);
    expect(t.steps[1]!.workdir).toBeNull();
    expect(t.steps[1]!.setup_script).toBe(false);
  });

  it('[steps.healthcheck] with the defaults of [environment.healthcheck]', () => {
    const t = expectTask(build(files));
    expect(t.steps[0]!.healthcheck).toEqual({ command: 'test -f /app/ready', interval_sec: 1, timeout_sec: 30, start_period_sec: 0, start_interval_sec: 5, retries: 2 });
    expect(t.steps[1]!.healthcheck).toBeNull();
  });

  it('a step\'s own artifacts beside the task\'s, checked like them', () => {
    const t = expectTask(build(files));
    expect(t.artifacts.map((a) => a.source)).toEqual(['/app/task.txt']);
    expect(t.steps[0]!.artifacts).toEqual([
      { source: '/app/one.txt', destination: null, service: 'main', exclude: [] },
      { source: '/app/d', destination: 'dd', service: 'main', exclude: ['*.log'] },
    ]);
    const r = expectRefusal(build({ ...files, 'task.toml': toml.replace('"/app/one.txt"', '"/tests/x"') }));
    expect(r.code).toBe('invalid_artifact');
    expect(r.message).toContain('steps[0]("one").artifacts[0]');
  });

  it('Task Folder Verifiers § Shared and separate verification: separate_verifier_for_artifacts cannot force a multi-step task that declares artifacts', () => {
    const r = expectRefusal(build(files, { separateVerifierForArtifacts: true, configFile: '/work/berth.toml' }));
    expect(r.code).toBe('separate_verifier_for_artifacts');
    expect(r.message).toContain('/work/berth.toml: episode.separate_verifier_for_artifacts');
    // Each fix the message names loads (issue 22): the option off, or no artifacts anywhere in task.toml.
    expect(r.message).toContain('set separate_verifier_for_artifacts = false under [episode] in /work/berth.toml');
    expect(r.message).toContain('remove the artifacts of the task and of every step');
    expect(r.message).not.toContain('environment_mode');
    expectTask(build(files, { configFile: '/work/berth.toml' }));
    const noArtifacts = { ...files, 'task.toml': '[[steps]]\nname = "one"\n[[steps]]\nname = "two"\n' };
    expectTask(build(noArtifacts, { separateVerifierForArtifacts: true }));
    // The fix the message used to name does not: every step separate still declares artifacts.
    const stepsSeparate = { ...files, 'task.toml': [
      'artifacts = ["/app/task.txt"]', '[environment]', 'docker_image = "img:1"',
      '[[steps]]', 'name = "one"', 'artifacts = ["/app/one.txt"]', '[steps.verifier]', 'environment_mode = "separate"',
      '[[steps]]', 'name = "two"', '[steps.verifier]', 'environment_mode = "separate"',
    ].join('\n') };
    expectTask(build(stepsSeparate, { configFile: '/work/berth.toml' }));
    expect(expectRefusal(build(stepsSeparate, { separateVerifierForArtifacts: true, configFile: '/work/berth.toml' })).code).toBe('separate_verifier_for_artifacts');
  });
});

describe('separate_verifier_for_artifacts (Task Folder Verifiers § Shared and separate verification)', () => {
  const single = (toml: string, extra: Record<string, string | undefined> = {}) => build({ 'task.toml': toml, ...extra }, { separateVerifierForArtifacts: true, configFile: '/w/berth.toml' });

  it('a single-step task that declares artifacts verifies separately, in a copy of [environment] with its docker_image', () => {
    const t = expectTask(single('artifacts = ["/app/out.txt"]\n[environment]\ndocker_image = "img:1"\n', { 'environment/Dockerfile': undefined }));
    expect(t.verifier.mode).toBe('separate');
    expect(t.verifier.environment!.docker_image).toBe('img:1');
    expect(t.verifier.image).toEqual({ kind: 'prebuilt', ref: 'img:1' });
  });

  it('…or in an image built from tests/Dockerfile', () => {
    const t = expectTask(single('artifacts = ["/app/out.txt"]\n', { 'tests/Dockerfile': 'FROM x\n' }));
    expect(t.verifier.image).toEqual({ kind: 'build', context: 'tests', dockerfile: 'tests/Dockerfile', pinned_image: null });
  });

  it('with neither, the task is refused naming the option', () => {
    const r = expectRefusal(single('artifacts = ["/app/out.txt"]\n'));
    expect(r.code).toBe('separate_verifier_without_image');
    expect(r.message).toContain('/w/berth.toml sets [episode].separate_verifier_for_artifacts');
  });

  it('a task without artifacts, and any task with the option off, keeps its own mode', () => {
    expect(expectTask(single('')).verifier.mode).toBe('shared');
    expect(expectTask(build({ 'task.toml': 'artifacts = ["/app/out.txt"]\n' })).verifier.mode).toBe('shared');
  });
});
