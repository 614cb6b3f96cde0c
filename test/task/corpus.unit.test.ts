// Every task of shared/corpus loads or is refused, with the reason (corpus/INVENTORY.md).
import { describe, expect, it } from 'vitest';
import { loadDataset, type Task } from '../../src/task/index.ts';
import { CORPUS, silent } from './helpers.ts';

type Expect =
  | { load: true; steps: number; verifier: 'test_sh' | 'python' | 'none'; mode: 'shared' | 'separate'; image: Task['image']['mode']; compose?: string[]; why: string }
  | { load: false; code: string; mentions: string; why: string };

const EXPECTED: Record<string, Expect> = {
  // harbor-cookbook
  'simple-task': { load: true, steps: 1, verifier: 'test_sh', mode: 'shared', image: 'pull', why: 'legacy version = "1.0"; FROM + WORKDIR is pull mode (Task Folder Format § Dockerfile modes)' },
  'multi-reward': { load: true, steps: 1, verifier: 'test_sh', mode: 'shared', image: 'overlay', why: 'FROM + RUN + WORKDIR is overlay mode' },
  'multi-container': { load: true, steps: 1, verifier: 'test_sh', mode: 'shared', image: 'overlay', compose: ['main', 'api-server'], why: 'a Compose task: a built sidecar behind a healthcheck (docs/design.md section 7, Compose groups)' },
  'multi-step': { load: true, steps: 3, verifier: 'test_sh', mode: 'shared', image: 'overlay', why: 'step workdir/ with setup.sh, a step healthcheck and step artifacts run as Harbor runs them (docs/departures.md)' },
  'mcp-tools': { load: true, steps: 1, verifier: 'test_sh', mode: 'shared', image: 'overlay', compose: ['main', 'mcp-server'], why: 'its MCP server is a Compose sidecar' },
  'dns-blacklisting': { load: true, steps: 1, verifier: 'test_sh', mode: 'shared', image: 'build', why: 'COPY and a non-empty ENTRYPOINT need a build' },
  // harbor-examples
  'hello-world': { load: true, steps: 1, verifier: 'test_sh', mode: 'shared', image: 'pull', why: 'schema 1.4; FROM + WORKDIR' },
  'hello-user': { load: true, steps: 1, verifier: 'test_sh', mode: 'shared', image: 'overlay', why: '[agent] user; RUN useradd is an overlay line' },
  'hello-workdir': { load: true, steps: 1, verifier: 'test_sh', mode: 'shared', image: 'overlay', why: 'environment.workdir; RUN mkdir' },
  'hello-healthcheck': { load: true, steps: 1, verifier: 'test_sh', mode: 'shared', image: 'build', why: 'COPY --chmod and ENTRYPOINT need a build' },
  'environment-env-single': { load: true, steps: 1, verifier: 'test_sh', mode: 'shared', image: 'build', why: 'no solution/ still loads; COPY + ENTRYPOINT is build mode' },
  'environment-env-multi': { load: true, steps: 1, verifier: 'test_sh', mode: 'shared', image: 'build', compose: ['main', 'sidecar'], why: 'Compose task: a named volume, an image-only sidecar, $$ escaping' },
  'hello-multi-step-simple': { load: true, steps: 2, verifier: 'test_sh', mode: 'shared', image: 'pull', why: 'smallest multi-step task: no top-level instruction.md or tests/ needed' },
  'separate-verifier-environment': { load: true, steps: 1, verifier: 'test_sh', mode: 'separate', image: 'pull', why: 'docker_image beside a pull-mode Dockerfile; separate verifier built from tests/Dockerfile; no-network honoured (docs/design.md section 7)' },
  'separate-verifier-multi-step': { load: true, steps: 2, verifier: 'test_sh', mode: 'shared', image: 'overlay', why: 'step 1 shared, step 2 separate (step_verifier_mode), its verifier built from tests/Dockerfile' },
  'sidecar-artifacts': { load: true, steps: 1, verifier: 'test_sh', mode: 'separate', image: 'overlay', compose: ['main', 'api'], why: 'Compose task: a collect hook and artifacts in a sidecar, a separate verifier' },
  'reward-kit-example': { load: true, steps: 1, verifier: 'test_sh', mode: 'shared', image: 'build', why: 'memory = "2G" / storage = "10G" legacy units; COPY --from needs a build' },
  'network-policy-dynamic-steps-mixed': { load: true, steps: 2, verifier: 'test_sh', mode: 'shared', image: 'pull', why: 'per-phase networks switch the sandbox between phases (docs/design.md section 7, Network)' },
  // harbor-verifier-mode-matrix
  'separate-implicit': { load: true, steps: 1, verifier: 'test_sh', mode: 'separate', image: 'pull', why: '[verifier.environment] implies separate; verifier image built from tests/' },
  'separate-reuse-env': { load: true, steps: 1, verifier: 'test_sh', mode: 'separate', image: 'overlay', why: 'separate mode reusing [environment], built from tests/Dockerfile' },
  'multistep-all-separate': { load: true, steps: 2, verifier: 'test_sh', mode: 'separate', image: 'pull', why: 'every step inherits the task\'s separate mode' },
  'multistep-top-shared-mixed': { load: true, steps: 2, verifier: 'test_sh', mode: 'shared', image: 'pull', why: 'a step made separate by [steps.verifier.environment]' },
  'multistep-top-separate-mixed': { load: true, steps: 3, verifier: 'test_sh', mode: 'separate', image: 'pull', why: 'a separate task with one step made shared and one with its own environment' },
  // others
  'anko-default-function-arguments': { load: true, steps: 1, verifier: 'test_sh', mode: 'separate', image: 'prebuilt', why: '[agent] and [verifier] no-network over a public environment switch per phase; docker_image beside an overlay Dockerfile' },
  'chart-area': { load: true, steps: 1, verifier: 'test_sh', mode: 'separate', image: 'build', compose: ['main', 'oracle-service'], why: 'Compose task: an oracle-service sidecar built from the task folder (context ..)' },
  simple_actors: { load: true, steps: 1, verifier: 'test_sh', mode: 'shared', image: 'build', why: 'tests/test.sh wins over tests/verifier.py (nemo_gym.data.tasks.harbor.python_verifier); COPY needs a build' },
  'adas-calibration-decision-service-2bdae9': { load: true, steps: 1, verifier: 'test_sh', mode: 'shared', image: 'overlay', why: 'RUN lines with continuations and comments are overlay lines' },
};

describe('shared/corpus', async () => {
  const loaded = await loadDataset(CORPUS, { logger: silent });

  it('finds all 27 tasks once', () => {
    const ids = [...loaded.tasks.map((t) => t.id), ...loaded.refused.map((r) => r.task_id)].sort();
    expect(ids).toEqual(Object.keys(EXPECTED).sort());
  });

  for (const [id, want] of Object.entries(EXPECTED)) {
    it(`${id}: ${want.load ? 'loads' : 'refused'} (${want.why})`, () => {
      const task = loaded.tasks.find((t) => t.id === id);
      const refusal = loaded.refused.find((r) => r.task_id === id);
      if (want.load) {
        expect(refusal?.message).toBeUndefined();
        expect(task).toBeDefined();
        expect(task!.multi_step ? task!.steps.length : 1).toBe(want.steps);
        expect(task!.verifier.kind).toBe(want.verifier);
        expect(task!.verifier.mode).toBe(want.mode);
        expect(task!.image.mode).toBe(want.image);
        expect(task!.compose?.services ?? null).toEqual(want.compose ?? null);
        expect(task!.digest).toMatch(/^sha256:[0-9a-f]{64}$/);
      } else {
        expect(task).toBeUndefined();
        expect(refusal!.code).toBe(want.code);
        expect(refusal!.message).toContain(want.mentions);
        expect(refusal!.message).toContain('Fix:');
        expect(refusal!.stage).toBe('load');
      }
    });
  }

  it('each source folder loads as its own dataset (mimic-bench and plbench dataset.toml tolerated)', async () => {
    for (const source of ['harbor-cookbook', 'harbor-examples', 'harbor-verifier-mode-matrix', 'deep-swe', 'mimic-bench', 'plbench', 'bluecollar-bench']) {
      const d = await loadDataset(`${CORPUS}/${source}`, { logger: silent });
      expect(d.tasks.length + d.refused.length).toBeGreaterThan(0);
      expect(d.settings.type).toBe('benchmark');
    }
  });

  it('reads the corpus details the inventory calls out', () => {
    const get = (id: string): Task => loaded.tasks.find((t) => t.id === id)!;
    expect(get('reward-kit-example').environment.memory_mb).toBe(2048);
    expect(get('reward-kit-example').environment.storage_mb).toBe(10240);
    expect(get('reward-kit-example').verifier.env).toEqual({ ANTHROPIC_API_KEY: '${ANTHROPIC_API_KEY}' });
    expect(get('hello-user').agent.user).toBe('agent');
    expect(get('hello-workdir').environment.workdir).toBe('/custom-workdir');
    expect(get('hello-healthcheck').environment.healthcheck).toEqual({ command: 'curl -sf http://localhost:8080/', interval_sec: 2, timeout_sec: 5, start_period_sec: 5, start_interval_sec: 2, retries: 2 });
    expect(get('environment-env-single').solution.kind).toBeNull();
    expect(get('simple-task').schema_version).toBe('1.0');
    const sve = get('separate-verifier-environment');
    expect(sve.image.image).toBe('ubuntu:24.04');
    expect(sve.verifier.network_mode).toBe('no-network');
    expect(sve.environment.network_mode).toBe('no-network');
    expect(sve.verifier.image).toEqual({ kind: 'build', context: 'tests', dockerfile: 'tests/Dockerfile', pinned_image: null });
    expect(sve.artifacts).toEqual([{ source: '/tmp/configured-artifact.txt', destination: null, service: 'main', exclude: [] }]);
    const ms = get('hello-multi-step-simple');
    expect(ms.steps.map((s) => s.name)).toEqual(['create-file', 'append-content']);
    expect(ms.steps[0]!.verifier.timeout_sec).toBe(30);
    expect(ms.steps[0]!.solution?.from).toBe('step');
    expect(ms.instruction).toBeNull();
    const adas = get('adas-calibration-decision-service-2bdae9');
    expect(adas.verifier.user).toBe('root');
    expect(adas.image.runs).toHaveLength(3);
    expect(adas.image.runs[0]!.workdir).toBe('/app');
    expect(get('simple_actors').artifacts[0]!.source).toBe('/app/actor.py');
    const cook = get('multi-step');
    expect(cook.steps[1]!.workdir).toMatch(/multi-step\/steps\/implement\/workdir$/);
    expect(cook.steps[1]!.setup_script).toBe(true);
    expect(cook.steps[1]!.healthcheck?.command).toBe('test -x /app/greet.sh');
    expect(cook.steps[2]!.artifacts.map((a) => a.source)).toEqual(['/app/README.md']);
    const mixed = get('separate-verifier-multi-step');
    expect(mixed.steps.map((s) => s.verifier.mode)).toEqual(['shared', 'separate']);
    expect(mixed.steps[1]!.verifier.environment!.workdir).toBe('/workspace');
    const net = get('network-policy-dynamic-steps-mixed');
    expect(net.steps.map((s) => [s.agent.network_mode, s.verifier.network_mode])).toEqual([['public', 'no-network'], ['no-network', 'public']]);
    expect([get('anko-default-function-arguments').agent.network_mode, get('anko-default-function-arguments').environment.network_mode]).toEqual(['no-network', 'public']);
  });

  it('issue 14: no task of the corpus is refused for a multi-step or network reason', () => {
    const reasons = loaded.refused.map((r) => r.code);
    expect(reasons.filter((c) => !['compose_unsupported'].includes(c))).toEqual([]);
    for (const r of loaded.refused) expect(r.message).not.toMatch(/network|step/i);
  });
});
