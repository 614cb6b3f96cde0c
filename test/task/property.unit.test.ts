// Property: whatever task.toml, folder shape and dataset override the loader is fed, it returns a Task
// or a typed refusal, and never throws anything else. In-memory snapshots keep it fast.
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { stringify } from 'smol-toml';
import { describe, expect, it } from 'vitest';
import { buildTaskOrRefusal, classifyDockerfile, snapshotFromFiles, TaskRefusal } from '../../src/task/index.ts';
import { taskOverrideSchema } from '../../src/task/schema.ts';
import { CORPUS, ctx } from './helpers.ts';

const RUNS = process.env.CI ? 10_000 : 1_000;

const SEEDS = [
  'harbor-examples/hello-world',
  'harbor-examples/separate-verifier-environment',
  'harbor-examples/hello-multi-step-simple',
  'harbor-cookbook/multi-step',
  'deep-swe/anko-default-function-arguments',
  'harbor-verifier-mode-matrix/multistep-top-separate-mixed',
  'harbor-examples/reward-kit-example',
  'mimic-bench/chart-area',
].map((p) => readFileSync(`${CORPUS}/${p}/task.toml`, 'utf8'));

const KEYS = [
  'schema_version', 'version', 'artifacts', 'steps', 'multi_step_reward_strategy', 'multi_step_reward_mode', 'environment', 'agent',
  'verifier', 'solution', 'docker_image', 'build_timeout_sec', 'os', 'cpus', 'memory_mb', 'memory', 'storage', 'storage_mb', 'gpus',
  'gpu_types', 'tpu', 'env', 'workdir', 'skills_dir', 'mcp_servers', 'healthcheck', 'network_mode', 'allowed_hosts', 'allow_internet',
  'timeout_sec', 'user', 'environment_mode', 'collect', 'inputs', 'command', 'service', 'name', 'min_reward', 'source', 'destination',
  'exclude', 'url', 'transport', 'retries', 'interval_sec', 'task', 'metadata', 'zzz',
];

const scalar = fc.oneof(
  fc.constantFrom('public', 'no-network', 'allowlist', 'separate', 'shared', 'mean', 'final', 'windows', 'linux', '/', '/tests/x', '../x', '2G', '${X}', 'stdio', 'http', 'main', 'one', ''),
  fc.string({ maxLength: 12 }),
  fc.integer({ min: -5, max: 100_000 }),
  fc.double({ noNaN: true, min: -10, max: 1e6 }),
  fc.boolean(),
);

const value: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  v: fc.oneof({ depthSize: 'small', withCrossShrink: true }, scalar, fc.array(tie('v'), { maxLength: 3 }), tie('t')),
  t: fc.dictionary(fc.constantFrom(...KEYS), tie('v'), { maxKeys: 5 }),
})).v;

/** A task.toml text: a corpus file with line edits, a generated document, or raw noise. */
const tomlText = fc.oneof(
  {
    weight: 4,
    arbitrary: fc
    .tuple(fc.constantFrom(...SEEDS), fc.array(fc.tuple(fc.nat(), fc.constantFrom('drop', 'dup', 'swap', 'set'), fc.constantFrom(...KEYS), scalar), { maxLength: 4 }))
    .map(([seed, edits]) => {
      const lines = seed.split('\n');
      for (const [at, op, key, v] of edits) {
        const i = lines.length ? at % lines.length : 0;
        if (op === 'drop') lines.splice(i, 1);
        else if (op === 'dup') lines.splice(i, 0, lines[i] ?? '');
        else if (op === 'swap') lines.splice(i, 1, lines[(i + 1) % lines.length] ?? '');
        else lines.splice(i, 0, `${key} = ${JSON.stringify(v) ?? '1'}`);
      }
      return lines.join('\n');
    }),
  },
  {
    weight: 4,
    arbitrary: fc.dictionary(fc.constantFrom(...KEYS), value, { maxKeys: 6 }).map((doc) => {
      try {
        return stringify(doc);
      } catch {
        return '';
      }
    }),
  },
  { weight: 1, arbitrary: fc.string({ maxLength: 80 }) },
);

/** True about one time in `n`. */
const rarely = (n: number): fc.Arbitrary<boolean> => fc.integer({ min: 1, max: n }).map((i) => i === 1);
const usually = (n: number): fc.Arbitrary<boolean> => rarely(n).map((b) => !b);

const dockerLine = fc.constantFrom(
  'FROM ubuntu:24.04', 'FROM $X', 'FROM a AS b', 'RUN echo hi', 'RUN ["a", 1]', 'RUN <<EOF', 'RUN --mount=x y', 'WORKDIR rel', 'WORKDIR /abs',
  'ENV A=1 B="x', 'ENV A b c', 'USER 1000', 'CMD []', 'ENTRYPOINT []', 'ENTRYPOINT ["x"]', 'COPY a b', 'LABEL a=b', '# c', '\\', 'RUN a \\', '',
);

const shape = fc.record({
  toml: tomlText,
  instruction: fc.option(fc.constantFrom('x', '<!-- canary -->\n', '# canary\n\nhi'), { nil: undefined, freq: 8 }),
  testSh: usually(6),
  verifierPy: fc.boolean(),
  testsDockerfile: fc.boolean(),
  testsCompose: fc.option(fc.constantFrom('services:\n  main:\n    build: .\n', 'services:\n  db:\n    image: x\n', '{]', 'x-a: 1\nname: n\n', '\tbad'), { nil: undefined, freq: 4 }),
  dockerfile: fc.option(fc.array(dockerLine, { maxLength: 6 }).map((l) => l.join('\n')), { nil: undefined }),
  compose: rarely(10),
  solution: fc.constantFrom('none', 'solve', 'answer', 'empty'),
  steps: fc.array(fc.record({ name: fc.constantFrom('one', 'two', 'create-file', 'scaffold', 'x y'), instruction: fc.boolean(), tests: fc.boolean(), workdir: fc.boolean(), setup: fc.boolean(), solution: fc.boolean() }), { maxLength: 3 }),
  taskData: fc.option(fc.constantFrom('{"a":1}', '[1]', '{', 'null'), { nil: undefined }),
  datasetVerifier: fc.boolean(),
  override: fc.option(fc.dictionary(fc.constantFrom('environment', 'verifier', 'agent', 'solution', 'artifacts', 'multi_step_reward_strategy'), value, { maxKeys: 3 }), { nil: undefined }),
  timeoutMultiplier: fc.double({ min: 0.1, max: 10, noNaN: true }),
  resourceMultiplier: fc.double({ min: 0.1, max: 10, noNaN: true }),
});

describe('property: the loader returns a Task or a typed refusal', () => {
  it(`never throws anything else (${RUNS} cases)`, () => {
    fc.assert(
      fc.property(shape, (s) => {
        const files: Record<string, string> = { 'task.toml': s.toml };
        if (s.instruction !== undefined) files['instruction.md'] = s.instruction;
        if (s.testSh) files['tests/test.sh'] = 'echo 1';
        if (s.verifierPy) files['tests/verifier.py'] = 'def verify(): return 1';
        if (s.testsDockerfile) files['tests/Dockerfile'] = 'FROM x';
        if (s.testsCompose !== undefined) files['tests/docker-compose.yaml'] = s.testsCompose;
        if (s.dockerfile !== undefined) files['environment/Dockerfile'] = s.dockerfile;
        if (s.compose) files['environment/docker-compose.yaml'] = 'services: {}';
        if (s.solution === 'solve') files['solution/solve.sh'] = 'true';
        if (s.solution === 'answer') files['solution/answer.md'] = '42';
        if (s.solution === 'empty') files['solution/notes'] = '';
        for (const st of s.steps) {
          if (st.instruction) files[`steps/${st.name}/instruction.md`] = 'do';
          if (st.tests) files[`steps/${st.name}/tests/test.sh`] = 'echo 1';
          if (st.workdir) files[`steps/${st.name}/workdir/a`] = 'a';
          if (st.setup) files[`steps/${st.name}/setup.sh`] = 'a';
          if (st.solution) files[`steps/${st.name}/solution/solve.sh`] = 'a';
        }
        if (s.taskData !== undefined) files['task_data.json'] = s.taskData;
        const parsedOverride = s.override === undefined ? undefined : taskOverrideSchema.safeParse(s.override);
        const result = buildTaskOrRefusal(
          snapshotFromFiles('/d/t', files),
          ctx({
            id: 't',
            defaults: { num_repeats: 1, timeout_multiplier: s.timeoutMultiplier, resource_multiplier: s.resourceMultiplier },
            override: parsedOverride?.success ? parsedOverride.data : undefined,
            datasetVerifier: s.datasetVerifier ? { path: '/d/verifier.py', sha256: 'ab' } : null,
            imageAliases: { 'ubuntu:24.04': 'berth-base:bookworm' },
          }),
        );
        if (result instanceof TaskRefusal) {
          expect(result.stage).toBe('load');
          expect(result.message).toContain('Fix:');
          expect(result.task_id).toBe('t');
        } else {
          expect(result.id).toBe('t');
          expect(Object.isFrozen(result)).toBe(true);
          expect(result.digest).toMatch(/^sha256:/);
          expect(Number.isFinite(result.agent.timeout_sec)).toBe(true);
        }
      }),
      { numRuns: RUNS },
    );
  });

  it(`classifyDockerfile never throws on arbitrary text (${RUNS} cases)`, () => {
    fc.assert(
      fc.property(fc.oneof(fc.string({ maxLength: 200 }), fc.array(dockerLine, { maxLength: 10 }).map((l) => l.join('\n'))), (text) => {
        const c = classifyDockerfile(text);
        expect(['pull', 'overlay', 'build']).toContain(c.mode);
      }),
      { numRuns: RUNS },
    );
  });
});
