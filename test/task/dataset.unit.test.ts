// dataset.toml (Task Folder Format § Dataset settings), overrides, multipliers and effective values
// (docs/design.md section 7, Effective values).
import { afterEach, describe, expect, it } from 'vitest';
import { DatasetRefusal, loadDataset, parseDatasetToml, type LoadedDataset } from '../../src/task/index.ts';
import { silent, taskFiles, tempTree } from './helpers.ts';

const cleanups: Array<() => void> = [];
afterEach(() => {
  while (cleanups.length) cleanups.pop()!();
});

async function dataset(files: Record<string, string>, opts: Parameters<typeof loadDataset>[1] = {}): Promise<LoadedDataset> {
  const t = tempTree(files);
  cleanups.push(t.cleanup);
  return loadDataset(t.root, { logger: silent, ...opts });
}

function gym(text: string) {
  return parseDatasetToml('/d', '/d/dataset.toml', text, null);
}

describe('[gym] table (Task Folder Format § [gym])', () => {
  const rows: Array<[string, string, Record<string, unknown>]> = [
    ['no dataset.toml: benchmark, any agent, defaults 1', '', { type: 'benchmark', license: null, allowed_agents: null, verified: false, defaults: { num_repeats: 1, timeout_multiplier: 1, resource_multiplier: 1 } }],
    ['type defaults to validation with a license', '[gym]\nlicense = "Apache 2.0"\n', { type: 'validation', license: 'Apache 2.0' }],
    ['every [gym] key', '[gym]\ntype = "train"\nlicense = "MIT"\nallowed_agents = ["oracle", "openai"]\ndomain = "coding"\nverified = true\nsource = "hub/x"\n', { type: 'train', allowed_agents: ['oracle', 'openai'], domain: 'coding', verified: true, source: 'hub/x' }],
    ['[gym.defaults]', '[gym.defaults]\nnum_repeats = 3\ntimeout_multiplier = 2.5\nresource_multiplier = 1.5\n', { defaults: { num_repeats: 3, timeout_multiplier: 2.5, resource_multiplier: 1.5 }, settings_in_digest: true }],
    ['num_repeats alone does not enter digests', '[gym.defaults]\nnum_repeats = 3\n', { settings_in_digest: false }],
    ["Harbor's [dataset] and [[tasks]] are tolerated", '[dataset]\nname = "a/b"\n[[tasks]]\nname = "a/x"\ndigest = "sha256:1"\n', { type: 'benchmark' }],
  ];
  for (const [name, text, want] of rows) it(name, () => expect(gym(text)).toMatchObject(want));

  const refusals: Array<[string, string, string, string]> = [
    ['any other key in [gym] is refused', '[gym]\nlicence = "MIT"\n', 'dataset_unknown_key', 'gym.licence'],
    ['any other key in [gym.defaults] is refused', '[gym.defaults]\nrepeats = 2\n', 'dataset_unknown_key', 'gym.defaults.repeats'],
    ['any other key in [gym.tasks."id"] is refused', '[gym.tasks."a"]\nsteps = []\n', 'dataset_unknown_key', 'gym.tasks."a".steps'],
    ['a key the overridden table does not have is refused', '[gym.tasks."a".environment]\nmemroy_mb = 1\n', 'dataset_unknown_key', 'gym.tasks."a".environment.memroy_mb'],
    ['a nested unknown key in an override is refused', '[gym.tasks."a".verifier.environment]\nbogus = 1\n', 'dataset_unknown_key', 'gym.tasks."a".verifier.environment.bogus'],
    ['type "example" stops the command', '[gym]\ntype = "example"\n', 'dataset_example_type', 'gym.type'],
    ['train needs a license', '[gym]\ntype = "train"\n', 'dataset_license_required', 'gym.license'],
    ['a multiplier must be positive', '[gym.defaults]\ntimeout_multiplier = 0\n', 'dataset_invalid_value', 'gym.defaults.timeout_multiplier'],
    ['an unknown type', '[gym]\ntype = "dev"\n', 'dataset_invalid_value', 'gym.type'],
    ['malformed TOML', '[gym\n', 'dataset_malformed', 'line'],
  ];

  // Task Folder Format § [gym]: license and domain take only Gym's value lists; the message lists them.
  it.each([
    ['a license outside Gym\'s list', '[gym]\nlicense = "Apache-2.0"\n', 'gym.license', ['"Apache 2.0"', '"MIT"', '"Creative Commons Attribution 4.0 International"', '"TBD"', '"GNU General Public License v3.0"']],
    ['a domain outside Gym\'s list', '[gym]\ndomain = "programming"\n', 'gym.domain', ['"math"', '"coding"', '"agent"', '"instruction_following"', '"rlhf"', '"other"']],
  ])('%s is refused, naming the key, the value and every allowed value', (_name, text, key, values) => {
    let refusal: DatasetRefusal | undefined;
    try { gym(text); } catch (e) { refusal = e as DatasetRefusal; }
    expect(refusal).toBeInstanceOf(DatasetRefusal);
    expect(refusal!.code).toBe('dataset_invalid_value');
    expect(refusal!.message).toContain(key);
    expect(refusal!.message).toContain('/d/dataset.toml');
    expect(refusal!.message).toMatch(/"Apache-2\.0"|"programming"/);
    for (const v of values) expect(refusal!.message).toContain(v);
  });

  it.each([
    ...['Apache 2.0', 'MIT', 'Creative Commons Attribution-ShareAlike 4.0 International', 'CC BY-NC 3.0', 'NVIDIA Evaluation Dataset License Agreement', 'TBD'].map((v) => ['license', v]),
    ...['math', 'coding', 'agent', 'knowledge', 'long_context', 'safety', 'games', 'translation', 'e2e', 'other'].map((v) => ['domain', v]),
  ])('[gym] %s = %j is one of Gym\'s values', (key, value) => {
    expect(gym(`[gym]\n${key} = ${JSON.stringify(value)}\n`)).toMatchObject({ [key]: value });
  });
  for (const [name, text, code, key] of refusals) {
    it(name, () => {
      try {
        gym(text);
        expect.unreachable();
      } catch (e) {
        expect(e).toBeInstanceOf(DatasetRefusal);
        expect((e as DatasetRefusal).code).toBe(code);
        expect((e as DatasetRefusal).message).toContain(key);
        expect((e as DatasetRefusal).message).toContain('/d/dataset.toml');
        expect((e as DatasetRefusal).message).toContain('Fix:');
      }
    });
  }
});

describe('dataset-level refusals stop the command (docs/design.md section 7)', () => {
  it('an override naming no task', async () => {
    await expect(dataset({ ...taskFiles('a'), 'dataset.toml': '[gym.tasks."b".environment]\ncpus = 1\n' })).rejects.toMatchObject({ code: 'override_names_no_task' });
  });

  it('an agent outside allowed_agents; the oracle is always admitted; --allow-unsupported-pairing skips', async () => {
    const files = { ...taskFiles('a'), 'dataset.toml': '[gym]\nallowed_agents = ["openai"]\n' };
    await expect(dataset(files, { agent: 'nop' })).rejects.toMatchObject({ code: 'agent_not_allowed' });
    expect((await dataset(files, { agent: 'oracle' })).tasks).toHaveLength(1);
    expect((await dataset(files, { agent: 'openai' })).tasks).toHaveLength(1);
    expect((await dataset(files, { agent: 'nop', allowUnsupportedPairing: true })).tasks).toHaveLength(1);
  });

  it('--strict turns a refused task into a stop', async () => {
    const files = { ...taskFiles('a'), ...taskFiles('b', { 'instruction.md': undefined }) };
    expect((await dataset(files)).refused).toHaveLength(1);
    await expect(dataset(files, { strict: true })).rejects.toMatchObject({ code: 'strict_refusal' });
  });

  it('a refused task never stops the others', async () => {
    const d = await dataset({ ...taskFiles('a'), ...taskFiles('b', { 'task.toml': 'x = [' }), ...taskFiles('c') });
    expect(d.tasks.map((t) => t.id)).toEqual(['a', 'c']);
    expect(d.refused.map((r) => r.task_id)).toEqual(['b']);
  });
});

describe('[gym.tasks."id"] overrides (Task Folder Format § [gym.tasks."task-id"])', () => {
  const TASK = '[environment]\ncpus = 1\nmemory_mb = 1000\n[environment.env]\nA = "task"\nB = "task"\n[verifier]\ntimeout_sec = 100\n[verifier.env]\nV = "task"\n';

  it('env merges over the task\'s own; other keys replace; artifacts append', async () => {
    const d = await dataset({
      ...taskFiles('t', { 'task.toml': `artifacts = ["/app/a"]\n${TASK}` }),
      'dataset.toml': [
        '[gym.tasks."t"]',
        'artifacts = ["/app/b"]',
        '[gym.tasks."t".environment]',
        'memory_mb = 4096',
        '[gym.tasks."t".environment.env]',
        'B = "override"',
        'C = "override"',
        '[gym.tasks."t".verifier]',
        'timeout_sec = 7',
        'inputs = ["actions.jsonl"]',
        '[gym.tasks."t".verifier.env]',
        'W = "override"',
      ].join('\n'),
    });
    const t = d.tasks[0]!;
    expect(t.environment.env).toEqual({ A: 'task', B: 'override', C: 'override' });
    expect(t.environment.memory_mb).toBe(4096);
    expect(t.environment.cpus).toBe(1);
    expect(t.verifier.timeout_sec).toBe(7);
    expect(t.verifier.env).toEqual({ V: 'task', W: 'override' });
    expect(t.verifier.inputs).toEqual(['actions.jsonl']);
    expect(t.artifacts.map((a) => a.source)).toEqual(['/app/a', '/app/b']);
  });

  // § [gym.tasks."task-id"]: "`environment` and `verifier` take any key of the task's table ... `verifier` also takes
  // the Gym-only `inputs` list ... `artifacts` adds entries"; § Dataset settings: "Gym refuses any other key".
  it('accepts exactly the spec\'s keys: environment, verifier (with inputs and environment) and artifacts', async () => {
    const d = await dataset({
      ...taskFiles('t'),
      'dataset.toml': [
        '[gym.tasks."t"]',
        'artifacts = ["/app/out"]',
        '[gym.tasks."t".environment]',
        'cpus = 2',
        '[gym.tasks."t".verifier]',
        'timeout_sec = 9',
        'inputs = ["actions.jsonl"]',
        '[gym.tasks."t".verifier.environment]',
        'docker_image = "v:1"',
      ].join('\n'),
    });
    const t = d.tasks[0]!;
    expect(t).toMatchObject({ environment: { cpus: 2 }, verifier: { timeout_sec: 9, inputs: ['actions.jsonl'], mode: 'separate' } });
    expect(t.artifacts.map((a) => a.source)).toEqual(['/app/out']);
  });

  it.each([
    ['agent', '[gym.tasks."t".agent]\ntimeout_sec = 10\n'],
    ['solution', '[gym.tasks."t".solution.env]\nX = "1"\n'],
    ['multi_step_reward_strategy', '[gym.tasks."t"]\nmulti_step_reward_strategy = "final"\n'],
  ])('refuses any other key (%s), naming dataset.toml, the key and the fix', async (key, text) => {
    const err = await dataset({ ...taskFiles('t'), 'dataset.toml': text }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DatasetRefusal);
    expect((err as DatasetRefusal).code).toBe('dataset_unknown_key');
    expect((err as DatasetRefusal).message).toMatch(new RegExp(`dataset\\.toml: gym\\.tasks\\."t"\\.${key}: an override takes only environment, verifier, artifacts`));
    expect((err as DatasetRefusal).message).toContain(`Fix: remove ${key} from [gym.tasks."t"], or set it in the task's own task.toml`);
  });

  it('verifier.environment merges field by field over the task\'s', async () => {
    const d = await dataset({
      ...taskFiles('t', { 'task.toml': '[verifier.environment]\ndocker_image = "v:1"\ncpus = 2\n[verifier.environment.env]\nX = "1"\n' }),
      'dataset.toml': '[gym.tasks."t".verifier.environment]\nmemory_mb = 512\n[gym.tasks."t".verifier.environment.env]\nY = "2"\n',
    });
    const v = d.tasks[0]!.verifier;
    expect(v.environment).toMatchObject({ docker_image: 'v:1', cpus: 2, memory_mb: 512, env: { X: '1', Y: '2' } });
  });

  it('verifier.environment on a task without one creates it and so selects separate mode', async () => {
    const d = await dataset({
      ...taskFiles('t'),
      'dataset.toml': '[gym.tasks."t".verifier.environment]\ndocker_image = "v:2"\n',
    });
    expect(d.tasks[0]!.verifier.mode).toBe('separate');
    expect(d.tasks[0]!.verifier.image).toEqual({ kind: 'prebuilt', ref: 'v:2' });
  });

  it('an override may use the legacy memory spelling; the dataset settings are not changed by loading', async () => {
    const d = await dataset({ ...taskFiles('t'), 'dataset.toml': '[gym.tasks."t".environment]\nmemory = "4G"\n' });
    expect(d.tasks[0]!.environment.memory_mb).toBe(4096);
    expect(d.settings.overrides.t).toEqual({ environment: { memory: '4G' } });
  });

  it('a malformed override refuses the task, naming dataset.toml and the key', async () => {
    const d = await dataset({ ...taskFiles('t'), ...taskFiles('u'), 'dataset.toml': '[gym.tasks."t".verifier]\ntimeout_sec = "long"\n' });
    expect(d.tasks.map((t) => t.id)).toEqual(['u']);
    const r = d.refused[0]!;
    expect(r.code).toBe('invalid_value');
    expect(r.message).toContain('dataset.toml: gym.tasks."t".verifier.timeout_sec = "long"');
  });

  it('a bad inputs entry in an override refuses the task, naming dataset.toml', async () => {
    const d = await dataset({ ...taskFiles('t'), 'dataset.toml': '[gym.tasks."t".verifier]\ninputs = ["../x"]\n' });
    expect(d.refused[0]!.code).toBe('invalid_input');
    expect(d.refused[0]!.message).toContain('dataset.toml: gym.tasks."t".verifier.inputs[0] = "../x"');
  });

  it('an override artifact is checked like the task\'s own', async () => {
    const d = await dataset({ ...taskFiles('t'), 'dataset.toml': '[gym.tasks."t"]\nartifacts = ["/tests"]\n' });
    expect(d.refused[0]!.message).toContain('gym.tasks."t".artifacts[0]');
  });
});

describe('effective values (docs/design.md section 7; Task Folder Format § [gym.defaults])', () => {
  const TASK = [
    '[agent]',
    'timeout_sec = 100',
    '[verifier]',
    'timeout_sec = 10',
    '[[verifier.collect]]',
    'command = "x"',
    'timeout_sec = 60',
    '[environment]',
    'cpus = 1',
    'memory_mb = 2048',
    'storage_mb = 10240',
    'gpus = 1',
    'build_timeout_sec = 600',
    '[environment.healthcheck]',
    'command = "true"',
    'timeout_sec = 30',
  ].join('\n');

  it('timeout_multiplier scales [agent] and [verifier] timeout_sec only; resource_multiplier scales cpus, memory and storage, rounded up', async () => {
    const d = await dataset({ ...taskFiles('t', { 'task.toml': TASK }), 'dataset.toml': '[gym.defaults]\ntimeout_multiplier = 1.5\nresource_multiplier = 1.5\n' });
    const t = d.tasks[0]!;
    expect(t.agent.timeout_sec).toBe(150);
    expect(t.verifier.timeout_sec).toBe(15);
    expect(t.environment).toMatchObject({ cpus: 2, memory_mb: 3072, storage_mb: 15360, gpus: 1, build_timeout_sec: 600 });
    expect(t.verifier.collect[0]!.timeout_sec).toBe(60);
    expect(t.environment.healthcheck!.timeout_sec).toBe(30);
    expect(t.settings).toEqual({ num_repeats: 1, timeout_multiplier: 1.5, resource_multiplier: 1.5 });
  });

  it('overrides apply before the multipliers', async () => {
    const d = await dataset({
      ...taskFiles('t', { 'task.toml': TASK }),
      'dataset.toml': '[gym.defaults]\ntimeout_multiplier = 2\nresource_multiplier = 2\n[gym.tasks."t".verifier]\ntimeout_sec = 10\n[gym.tasks."t".environment]\nmemory_mb = 100\n',
    });
    expect(d.tasks[0]!.verifier.timeout_sec).toBe(20);
    expect(d.tasks[0]!.environment.memory_mb).toBe(200);
  });

  it('a step\'s own timeouts scale too, and inherited agent timeouts scale once', async () => {
    const d = await dataset({
      ...taskFiles('t', {
        'task.toml': '[agent]\ntimeout_sec = 100\n[[steps]]\nname = "s"\n[steps.verifier]\ntimeout_sec = 30\n[[steps]]\nname = "u"\n[steps.agent]\ntimeout_sec = 5\n',
        'steps/s/instruction.md': 'x',
        'steps/u/instruction.md': 'y',
      }),
      'dataset.toml': '[gym.defaults]\ntimeout_multiplier = 3\n',
    });
    const [s, u] = d.tasks[0]!.steps;
    expect(s!.agent.timeout_sec).toBe(300);
    expect(s!.verifier.timeout_sec).toBe(90);
    expect(u!.agent.timeout_sec).toBe(15);
    expect(u!.verifier.timeout_sec).toBe(1800);
  });

  it('[verifier.environment] resources scale; a separate verifier reusing [environment] gets the scaled copy', async () => {
    const d = await dataset({
      ...taskFiles('a', { 'task.toml': '[verifier.environment]\ndocker_image = "v"\ncpus = 3\nmemory_mb = 1000\n' }),
      ...taskFiles('b', { 'task.toml': '[verifier]\nenvironment_mode = "separate"\n[environment]\ndocker_image = "x"\ncpus = 1\n', 'environment/Dockerfile': undefined }),
      'dataset.toml': '[gym.defaults]\nresource_multiplier = 1.5\n',
    });
    expect(d.tasks[0]!.verifier.environment).toMatchObject({ cpus: 5, memory_mb: 1500 });
    expect(d.tasks[1]!.verifier.environment).toMatchObject({ cpus: 2 });
  });

  // Task Folder Format § [gym.defaults], resource_multiplier row; docs/design.md section 7 "Effective values": not scaled.
  it('[steps.verifier.environment] resources do not scale; a step inheriting [verifier.environment] gets its scaled values', async () => {
    const d = await dataset({
      ...taskFiles('t', {
        'task.toml': '[verifier.environment]\ndocker_image = "v"\ncpus = 2\nmemory_mb = 1000\nstorage_mb = 3000\n' +
          '[[steps]]\nname = "own"\n[steps.verifier.environment]\ndocker_image = "w"\ncpus = 3\nmemory_mb = 1000\nstorage_mb = 2000\n' +
          '[[steps]]\nname = "inherits"\n',
        'steps/own/instruction.md': 'x',
        'steps/inherits/instruction.md': 'y',
      }),
      'dataset.toml': '[gym.defaults]\nresource_multiplier = 1.5\n',
    });
    expect(d.refused).toEqual([]);
    const [own, inherits] = d.tasks[0]!.steps;
    expect(own!.verifier.environment).toMatchObject({ cpus: 3, memory_mb: 1000, storage_mb: 2000 });
    expect(inherits!.verifier.environment).toMatchObject({ cpus: 3, memory_mb: 1500, storage_mb: 4500 });
  });
});

describe('override artifacts are told apart from the task\'s own in messages', () => {
  it('a bad override artifact names dataset.toml and its own index', async () => {
    const t = tempTree({ ...taskFiles('t', { 'task.toml': 'artifacts = ["/app/a"]\n' }), 'dataset.toml': '[gym.tasks."t"]\nartifacts = [{ destination = "x" }]\n' });
    cleanups.push(t.cleanup);
    const d = await loadDataset(t.root, { logger: silent });
    expect(d.refused[0]!.message).toContain('dataset.toml: gym.tasks."t".artifacts[0]');
  });
  it('a bad task artifact names task.toml even when the override adds artifacts', async () => {
    const t = tempTree({ ...taskFiles('t', { 'task.toml': 'artifacts = [{ destination = "x" }]\n' }), 'dataset.toml': '[gym.tasks."t"]\nartifacts = ["/app/b"]\n' });
    cleanups.push(t.cleanup);
    const d = await loadDataset(t.root, { logger: silent });
    expect(d.refused[0]!.message).toContain('task.toml: artifacts[0]');
  });
});
