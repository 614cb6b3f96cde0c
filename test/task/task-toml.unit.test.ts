// Every task.toml key, its default and the legacy spellings, each row citing its spec page and section.
import { describe, expect, it } from 'vitest';
import type { Task } from '../../src/task/index.ts';
import { build, expectTask, toml } from './helpers.ts';

interface Row {
  spec: string;
  toml: string;
  files?: Record<string, string | undefined>;
  check: (t: Task) => void;
}

const rows: Row[] = [
  // ---- defaults ----
  {
    spec: 'Task Folder Format § Top level: defaults (artifacts [], strategy mean)',
    toml: '',
    check: (t) => {
      expect(t.artifacts).toEqual([]);
      expect(t.multi_step_reward_strategy).toBe('mean');
      expect(t.multi_step).toBe(false);
      expect(t.steps).toEqual([]);
      expect(t.schema_version).toBeNull();
      expect(t.name).toBeNull();
      expect(t.metadata).toEqual({});
    },
  },
  {
    spec: 'Task Folder Format § Environment: defaults',
    toml: '',
    check: (t) => {
      expect(t.environment).toEqual({
        docker_image: null,
        build_timeout_sec: 600,
        os: 'linux',
        cpus: null,
        memory_mb: null,
        storage_mb: null,
        gpus: null,
        gpu_types: null,
        env: {},
        workdir: null,
        skills_dir: null,
        mcp_servers: [],
        healthcheck: null,
        network_mode: 'public',
        allowed_hosts: [],
      });
    },
  },
  {
    spec: 'Task Folder Format § Agent: timeout_sec defaults to 28800 (docs/design.md section 7)',
    toml: '',
    check: (t) => expect(t.agent).toEqual({ timeout_sec: 28800, user: null, network_mode: 'public', allowed_hosts: [] }),
  },
  {
    spec: 'Task Folder Format § Verifier: defaults (600 s, shared, no user, no hooks)',
    toml: '',
    check: (t) => {
      expect(t.verifier.timeout_sec).toBe(600);
      expect(t.verifier.mode).toBe('shared');
      expect(t.verifier.user).toBeNull();
      expect(t.verifier.env).toEqual({});
      expect(t.verifier.collect).toEqual([]);
      expect(t.verifier.inputs).toEqual([]);
      expect(t.verifier.environment).toBeNull();
      expect(t.verifier.image).toBeNull();
      expect(t.verifier.network_mode).toBe('public');
    },
  },
  {
    spec: 'Task Folder Format § Solution: env defaults to {}',
    toml: '',
    check: (t) => expect(t.solution.env).toEqual({}),
  },
  // ---- top level ----
  {
    spec: 'Task Folder Format § Top level: [task] name is informational; the id is the folder name',
    toml: '[task]\nname = "org/other"\nversion = "1.0.0"\n[[task.authors]]\nname = "A"\n',
    check: (t) => {
      expect(t.id).toBe('demo');
      expect(t.name).toBe('org/other');
    },
  },
  {
    spec: 'Task Folder Format § Top level: artifacts as strings and tables',
    toml: 'artifacts = ["/app/out.txt", { source = "/logs/artifacts/x", destination = "x/y", exclude = ["*.tmp"] }]\n',
    check: (t) =>
      expect(t.artifacts).toEqual([
        { source: '/app/out.txt', destination: null, service: 'main', exclude: [] },
        { source: '/logs/artifacts/x', destination: 'x/y', service: 'main', exclude: ['*.tmp'] },
      ]),
  },
  {
    spec: 'Task Folder Format § Top level: multi_step_reward_strategy final',
    toml: 'multi_step_reward_strategy = "final"\n',
    check: (t) => expect(t.multi_step_reward_strategy).toBe('final'),
  },
  {
    spec: 'Task Folder Format § Task settings: schema_version and source are read without acting on them',
    toml: 'schema_version = "1.4"\nsource = "hub/x"\n[metadata]\nk = 1\n',
    check: (t) => {
      expect(t.schema_version).toBe('1.4');
      expect(t.source).toBe('hub/x');
      expect(t.metadata).toEqual({ k: 1 });
    },
  },
  // ---- environment ----
  {
    spec: 'Task Folder Format § Environment: every key',
    toml: [
      '[environment]',
      'docker_image = "img:1"',
      'build_timeout_sec = 120',
      'cpus = 2',
      'memory_mb = 1024',
      'storage_mb = 3000',
      'gpus = 1',
      'gpu_types = ["a100", "h100"]',
      'workdir = "/w"',
      'skills_dir = "skills"',
      'network_mode = "no-network"',
      '[environment.env]',
      'A = "1"',
      'B = "${HOST_B:-x}"',
      'N = 5',
      '[environment.healthcheck]',
      'command = "true"',
      '[[environment.mcp_servers]]',
      'name = "m"',
      'url = "http://m:8000/sse"',
      '[[environment.mcp_servers]]',
      'name = "h"',
      'transport = "http"',
      'url = "http://h/mcp"',
      '[[environment.mcp_servers]]',
      'name = "s"',
      'transport = "stdio"',
      'command = "run"',
      'args = ["--x"]',
    ].join('\n'),
    files: { 'environment/Dockerfile': undefined },
    check: (t) => {
      const e = t.environment;
      expect(e.docker_image).toBe('img:1');
      expect(e.build_timeout_sec).toBe(120);
      expect([e.cpus, e.memory_mb, e.storage_mb, e.gpus]).toEqual([2, 1024, 3000, 1]);
      expect(e.gpu_types).toEqual(['a100', 'h100']);
      expect(e.workdir).toBe('/w');
      expect(e.skills_dir).toBe('skills');
      expect(e.network_mode).toBe('no-network');
      expect(e.env).toEqual({ A: '1', B: '${HOST_B:-x}', N: '5' });
      expect(e.healthcheck).toEqual({ command: 'true', interval_sec: 5, timeout_sec: 30, start_period_sec: 0, start_interval_sec: 5, retries: 3 });
      expect(e.mcp_servers).toEqual([
        { name: 'm', transport: 'sse', url: 'http://m:8000/sse', command: null, args: [] },
        { name: 'h', transport: 'streamable-http', url: 'http://h/mcp', command: null, args: [] },
        { name: 's', transport: 'stdio', url: null, command: 'run', args: ['--x'] },
      ]);
      expect(t.image.mode).toBe('prebuilt');
      expect(t.agent.network_mode).toBe('no-network');
    },
  },
  {
    spec: 'Task Folder Format § Task settings: a UTF-8 byte-order mark before task.toml is read',
    toml: '\uFEFFschema_version = "1.4"\n',
    check: (t) => expect(t.schema_version).toBe('1.4'),
  },
  {
    spec: 'Task Folder Format § Environment: os is case-insensitive linux',
    toml: '[environment]\nos = "Linux"\n',
    check: (t) => expect(t.environment.os).toBe('linux'),
  },
  // ---- agent ----
  {
    spec: 'Task Folder Format § Agent: timeout_sec and user (numeric kept as a number)',
    toml: '[agent]\ntimeout_sec = 99.5\nuser = 1000\n',
    check: (t) => expect(t.agent).toEqual({ timeout_sec: 99.5, user: 1000, network_mode: 'public', allowed_hosts: [] }),
  },
  {
    spec: 'Task Folder Format § Agent: a network_mode equal to the environment\'s is not switching',
    toml: '[agent]\nnetwork_mode = "public"\n',
    check: (t) => expect(t.agent.network_mode).toBe('public'),
  },
  // ---- verifier ----
  {
    spec: 'Task Folder Format § Verifier: timeout, user, env, collect hooks with defaults',
    toml: [
      '[verifier]',
      'timeout_sec = 30',
      'user = "root"',
      '[verifier.env]',
      'KEY = "${SECRET}"',
      '[[verifier.collect]]',
      'command = "git diff > /logs/artifacts/p"',
      '[[verifier.collect]]',
      'command = "x"',
      'service = "main"',
      'timeout_sec = 5',
      'user = 0',
    ].join('\n'),
    check: (t) => {
      expect(t.verifier.timeout_sec).toBe(30);
      expect(t.verifier.user).toBe('root');
      expect(t.verifier.env).toEqual({ KEY: '${SECRET}' });
      expect(t.verifier.collect).toEqual([
        { command: 'git diff > /logs/artifacts/p', service: 'main', timeout_sec: 60, user: null },
        { command: 'x', service: 'main', timeout_sec: 5, user: 0 },
      ]);
    },
  },
  {
    spec: 'Task Folder Verifiers § Shared and separate: environment_mode = "shared" explicitly',
    toml: '[verifier]\nenvironment_mode = "shared"\n',
    check: (t) => expect(t.verifier.mode).toBe('shared'),
  },
  {
    spec: 'Task Folder Verifiers § Shared and separate: [verifier.environment] selects separate; its docker_image is the verifier image',
    toml: '[verifier.environment]\ndocker_image = "verifier:1"\ncpus = 4\nworkdir = "/v"\n[verifier.environment.env]\nV = "1"\n',
    check: (t) => {
      expect(t.verifier.mode).toBe('separate');
      expect(t.verifier.image).toEqual({ kind: 'prebuilt', ref: 'verifier:1' });
      expect(t.verifier.environment?.cpus).toBe(4);
      expect(t.verifier.environment?.workdir).toBe('/v');
      expect(t.verifier.environment?.env).toEqual({ V: '1' });
    },
  },
  {
    spec: 'Task Folder Verifiers § Shared and separate (image table row 2): no [verifier.environment] and [environment].docker_image → the task\'s image',
    toml: '[verifier]\nenvironment_mode = "separate"\n[environment]\ndocker_image = "task:1"\nworkdir = "/w"\n',
    check: (t) => {
      expect(t.verifier.image).toEqual({ kind: 'prebuilt', ref: 'task:1' });
      expect(t.verifier.environment?.workdir).toBe('/w');
    },
  },
  {
    spec: 'Task Folder Verifiers § Shared and separate (image table row 3): tests/Dockerfile is built',
    toml: '[verifier]\nenvironment_mode = "separate"\n',
    files: { 'tests/Dockerfile': 'FROM ubuntu:24.04\nCOPY test.sh /tests/test.sh\n' },
    check: (t) => expect(t.verifier.image).toEqual({ kind: 'build', context: 'tests', dockerfile: 'tests/Dockerfile', pinned_image: null }),
  },
  {
    spec: 'nemo_gym.data.tasks.harbor.verifier_env § verifier_compose_*: a main-only tests/docker-compose.yaml with image and build is read',
    toml: '[verifier]\nenvironment_mode = "separate"\n',
    files: {
      'tests/Dockerfile': 'FROM ubuntu:24.04\n',
      'tests/docker-compose.yaml': 'name: v\nx-note: 1\nservices:\n  main:\n    image: my/verifier:pinned\n    build:\n      context: .\n    pull_policy: build\n',
    },
    check: (t) => expect(t.verifier.image).toEqual({ kind: 'build', context: 'tests', dockerfile: 'tests/Dockerfile', pinned_image: 'my/verifier:pinned' }),
  },
  {
    spec: 'nemo_gym.data.tasks.harbor.verifier_env § verifier_compose_*: flow style, build.dockerfile and build.args are read and honoured (issue 22)',
    toml: '[verifier]\nenvironment_mode = "separate"\n',
    files: {
      'tests/Grader.Dockerfile': 'FROM ubuntu:24.04\n',
      'tests/docker-compose.yaml': '{services: {main: {image: "my/grader:2", build: {context: ./, dockerfile: Grader.Dockerfile, args: [LEVEL=3]}}}}\n',
    },
    check: (t) => expect(t.verifier.image).toEqual({ kind: 'build', context: 'tests', dockerfile: 'tests/Grader.Dockerfile', pinned_image: 'my/grader:2', build_args: { LEVEL: '3' } }),
  },
  {
    spec: 'Task Folder Verifiers § Shared and separate: a prebuilt verifier with pull_policy never is looked up, never pulled (issue 22)',
    toml: '[verifier.environment]\ndocker_image = "verifier:1"\n',
    files: { 'tests/docker-compose.yaml': 'services:\n  main:\n    pull_policy: never\n' },
    check: (t) => expect(t.verifier.image).toEqual({ kind: 'prebuilt', ref: 'verifier:1', pull_policy: 'never' }),
  },
  {
    spec: 'docs/design.md section 7 Network: no-network on a separate [verifier] is honoured',
    toml: '[verifier]\nnetwork_mode = "no-network"\n[verifier.environment]\ndocker_image = "v:1"\n',
    check: (t) => {
      expect(t.verifier.network_mode).toBe('no-network');
      expect(t.environment.network_mode).toBe('public');
    },
  },
  {
    spec: 'docs/design.md section 7 Network: a separate verifier environment\'s no-network is honoured',
    toml: '[verifier.environment]\ndocker_image = "v:1"\nnetwork_mode = "no-network"\n',
    check: (t) => expect(t.verifier.network_mode).toBe('no-network'),
  },
  {
    spec: 'nemo_gym.data.tasks.harbor.python_verifier § python_verifier_for: tests/verifier.py grades when there is no test.sh',
    toml: '',
    files: { 'tests/test.sh': undefined, 'tests/verifier.py': 'def verify(workspace): return 1.0\n' },
    check: (t) => {
      expect(t.verifier.kind).toBe('python');
      expect(t.verifier.script).toBe('/data/demo/tests/verifier.py');
      expect(t.verifier.python_in_task_tests).toBe(true);
    },
  },
  {
    spec: 'nemo_gym.data.tasks.harbor.python_verifier § python_verifier_for: test.sh wins over verifier.py',
    toml: '',
    files: { 'tests/verifier.py': 'x' },
    check: (t) => {
      expect(t.verifier.kind).toBe('test_sh');
      expect(t.verifier.script).toBe('/data/demo/tests/test.sh');
    },
  },
  {
    spec: 'Task Folder Format § What the loader refuses: a tests/ folder with neither test.sh nor verifier.py loads',
    toml: '',
    files: { 'tests/test.sh': undefined, 'tests/fixture.txt': 'x' },
    check: (t) => {
      expect(t.verifier.kind).toBe('none');
      expect(t.verifier.script).toBeNull();
    },
  },
  // ---- solution ----
  {
    spec: 'Task Folder Format § Solution: env and solve.sh',
    toml: '[solution.env]\nTOKEN = "${T}"\n',
    check: (t) => expect(t.solution).toEqual({ dir: '/data/demo/solution', kind: 'solve_sh', env: { TOKEN: '${T}' } }),
  },
  {
    spec: 'Task Folder Verifiers § Reference answers: solution/answer.md',
    toml: '',
    files: { 'solution/solve.sh': undefined, 'solution/answer.md': '42\n' },
    check: (t) => expect(t.solution.kind).toBe('answer_md'),
  },
  {
    spec: 'Task Folder Format § Task folder layout: no solution/ loads',
    toml: '',
    files: { 'solution/solve.sh': undefined },
    check: (t) => expect(t.solution).toEqual({ dir: null, kind: null, env: {} }),
  },
  // ---- folders ----
  {
    spec: 'Task Folder Format § Task folder layout: leading canary lines of instruction.md are dropped',
    toml: '',
    files: { 'instruction.md': '<!-- BENCHMARK DATA canary GUID 1234 -->\n# canary: do not train\n\nReal prompt.\n' },
    check: (t) => expect(t.instruction).toBe('Real prompt.\n'),
  },
  {
    spec: 'Task Folder Format § Task folder layout: task_data.json is the task\'s own fields',
    toml: '',
    files: { 'task_data.json': '{"answer": "42"}' },
    check: (t) => expect(t.task_data).toEqual({ answer: '42' }),
  },
  {
    spec: 'Task Folder Format § Limitations: a trajectory.json seeding the agent is recorded',
    toml: '',
    files: { 'trajectory.json': '{}' },
    check: (t) => expect(t.seed_trajectory).toBe('/data/demo/trajectory.json'),
  },
  {
    spec: 'Task Folder Format § Environment: docker_image with no Dockerfile uploads environment/ files',
    toml: '[environment]\ndocker_image = "x:1"\n',
    files: { 'environment/Dockerfile': undefined, 'environment/data.txt': 'd' },
    check: (t) => {
      expect(t.image.mode).toBe('prebuilt');
      expect(t.image.upload_environment_files).toBe(true);
    },
  },
  // ---- legacy ----
  {
    spec: 'Task Folder Format § Top level (legacy): version is schema_version',
    toml: 'version = "1.0"\n',
    check: (t) => expect(t.schema_version).toBe('1.0'),
  },
  {
    spec: 'Harbor 0.25 Legacy keys: version is dropped when schema_version is present',
    toml: 'version = "1.0"\nschema_version = "1.3"\n',
    check: (t) => expect(t.schema_version).toBe('1.3'),
  },
  {
    spec: 'Harbor 0.25 Legacy keys: memory/storage strings with units (G ×1024, M, K ÷1024)',
    toml: '[environment]\nmemory = "2G"\nstorage = "512M"\n',
    check: (t) => {
      expect(t.environment.memory_mb).toBe(2048);
      expect(t.environment.storage_mb).toBe(512);
    },
  },
  {
    spec: 'Harbor 0.25 Legacy keys: truncated to whole MiB as Harbor converts it (issue 37); equal memory_mb is no conflict',
    toml: '[environment]\nmemory = "1536K"\nstorage = "1G"\nstorage_mb = 1024\n',
    check: (t) => {
      expect(t.environment.memory_mb).toBe(1);
      expect(t.environment.storage_mb).toBe(1024);
    },
  },
  {
    spec: 'issue 37: a memory string under 1 MiB truncates to 0, which Harbor keeps and limits nothing with: no limit',
    toml: '[environment]\nmemory = "512K"\n',
    check: (t) => {
      expect(t.environment.memory_mb).toBeNull();
      expect(t.warnings.join('\n')).toContain('no limit');
    },
  },
  {
    spec: 'issue 37: "1.9G" is 1945 MiB, truncated, as Harbor 0.25 ran it (its container\'s limit: 2039480320 bytes)',
    toml: '[environment]\nmemory = "1.9G"\n',
    check: (t) => expect(t.environment.memory_mb).toBe(1945),
  },
  {
    spec: 'issue 37: an artifact with destination = "" has no destination, as Harbor reads it (Harbor 0.25 collected it to artifacts/app/out.txt)',
    toml: 'artifacts = [{ source = "/app/out.txt", destination = "" }]\n',
    check: (t) => expect(t.artifacts).toEqual([{ source: '/app/out.txt', destination: null, service: 'main', exclude: [] }]),
  },
  {
    spec: 'Harbor 0.25 Legacy keys: a non-string memory is dropped',
    toml: '[environment]\nmemory = 2048\n',
    check: (t) => {
      expect(t.environment.memory_mb).toBeNull();
      expect(t.warnings.join('\n')).toContain('memory');
    },
  },
  {
    spec: 'Harbor 0.25 Legacy keys: allow_internet = false is no-network',
    toml: '[environment]\nallow_internet = false\n',
    check: (t) => expect(t.environment.network_mode).toBe('no-network'),
  },
  {
    spec: 'Harbor 0.25 Legacy keys: allow_internet = true is public',
    toml: '[environment]\nallow_internet = true\n',
    check: (t) => expect(t.environment.network_mode).toBe('public'),
  },
  {
    spec: 'Harbor 0.25 Legacy keys: allow_internet is ignored beside network_mode',
    toml: '[environment]\nallow_internet = true\nnetwork_mode = "no-network"\n',
    check: (t) => expect(t.environment.network_mode).toBe('no-network'),
  },
  {
    spec: 'Harbor 0.25 Legacy keys: allow_internet on [verifier.environment]',
    toml: '[verifier.environment]\ndocker_image = "v"\nallow_internet = false\n',
    check: (t) => expect(t.verifier.network_mode).toBe('no-network'),
  },
  {
    spec: 'Multi-Step Harbor Tasks § Legacy keys accepted: multi_step_reward_mode = "aggregate" is dropped silently',
    toml: 'multi_step_reward_mode = "aggregate"\n',
    check: (t) => {
      expect(t.multi_step_reward_strategy).toBe('mean');
      expect(t.warnings).toEqual([]);
    },
  },
  {
    spec: 'Multi-Step Harbor Tasks § Legacy keys accepted: "aggregate" beside the task\'s own strategy keeps that strategy',
    toml: 'multi_step_reward_mode = "aggregate"\nmulti_step_reward_strategy = "final"\n',
    check: (t) => {
      expect(t.multi_step_reward_strategy).toBe('final');
      expect(t.warnings).toEqual([]);
    },
  },
  {
    spec: 'Multi-Step Harbor Tasks § Legacy keys accepted: any other value is dropped too, with a warning naming it, never read as a strategy',
    toml: 'multi_step_reward_mode = "final"\n',
    check: (t) => {
      expect(t.multi_step_reward_strategy).toBe('mean');
      expect(t.warnings.some((w) => w.includes('multi_step_reward_mode') && w.includes('"final"'))).toBe(true);
    },
  },
];

describe('task.toml keys, defaults and legacy spellings', () => {
  for (const row of rows) {
    it(row.spec, () => {
      const result = row.files ? build({ 'task.toml': row.toml, ...row.files }) : toml(row.toml);
      row.check(expectTask(result));
    });
  }
});

describe('unknown keys (Task Folder Format § Top level: "ignores unknown keys, logging each one")', () => {
  it('reports each unknown key with its path and still loads', () => {
    const seen: string[] = [];
    const t = toml('bogus = 1\n[environment]\nfoo = "x"\n[agent]\nbar = 1\n[[verifier.collect]]\ncommand = "x"\nzap = 2\n[task]\nanything = 1\n[metadata]\nfree = 1\n', {
      unknownKey: (k) => seen.push(k),
    });
    expectTask(t);
    expect(seen.sort()).toEqual(['agent.bar', 'bogus', 'environment.foo', 'verifier.collect[].zap']);
  });

  it('verifier.inputs belongs in dataset.toml: in task.toml it is an unknown key and ignored', () => {
    const seen: string[] = [];
    const t = expectTask(toml('[verifier]\ninputs = ["a.jsonl"]\n', { unknownKey: (k) => seen.push(k) }));
    expect(seen).toEqual(['verifier.inputs']);
    expect(t.verifier.inputs).toEqual([]);
  });

  it('Task Folder Verifiers § Sidecar inputs: dataset.toml inputs reach the verifier', () => {
    const t = expectTask(toml('', { override: { verifier: { inputs: ['actions.jsonl'] } } }));
    expect(t.verifier.inputs).toEqual(['actions.jsonl']);
  });

  it('Task Folder Format § Verifier: a hook or artifact naming a service other than main only warns', () => {
    const t = expectTask(toml('artifacts = [{ source = "/var/log/x", service = "api" }]\n[[verifier.collect]]\ncommand = "x"\nservice = "api"\n'));
    expect(t.warnings.filter((w) => w.includes('"api"'))).toHaveLength(2);
  });

  it('Task Folder Format § Environment: skills_dir and environment/skills/', () => {
    const t = expectTask(build({ 'task.toml': '[environment]\nskills_dir = "/skills"\n', 'environment/skills/a.md': 'x' }));
    expect(t.environment.skills_dir).toBe('/skills');
    expect(t.skills_source).toBe('/data/demo/environment/skills');
  });

  it('legacy spellings are not reported as unknown', () => {
    const seen: string[] = [];
    expectTask(toml('version = "1"\nmulti_step_reward_mode = "x"\n[environment]\nmemory = "1G"\nallow_internet = true\n', { unknownKey: (k) => seen.push(k) }));
    expect(seen).toEqual([]);
  });

  it('a loaded task is immutable', () => {
    const t = expectTask(toml(''));
    expect(Object.isFrozen(t)).toBe(true);
    expect(Object.isFrozen(t.environment.env)).toBe(true);
    expect(() => {
      (t as any).id = 'x';
    }).toThrow();
  });
});
