// Every row of "What the loader refuses" (Task Folder Format) and of Multi-Step Harbor Tasks § What is
// refused, plus the departures of docs/design.md section 7. Each refusal names the file, the key, the value and the fix.
import { describe, expect, it } from 'vitest';
import type { RefusalCode } from '../../src/task/index.ts';
import { build, expectRefusal } from './helpers.ts';

interface Row {
  spec: string;
  files: Record<string, string | undefined>;
  code: RefusalCode;
  file: string;
  mentions: string[];
  dirs?: string[];
}

const STEP = (extra = '', name = 'one'): string => `[[steps]]\nname = "${name}"\n${extra}`;
const STEP_FILES = { 'steps/one/instruction.md': 'x', 'steps/one/tests/test.sh': 'x' };

const rows: Row[] = [
  // ---- Missing files ----
  { spec: 'Missing files: no instruction.md (single-step)', files: { 'instruction.md': undefined }, code: 'missing_instruction', file: 'instruction.md', mentions: ['instruction.md'] },
  { spec: 'Missing files: no tests/ folder (single-step, no dataset verifier.py)', files: { 'tests/test.sh': undefined }, code: 'missing_tests', file: 'tests/', mentions: ['tests/', 'verifier.py'] },
  { spec: 'Missing files: a step with no steps/<name>/ folder', files: { 'task.toml': STEP() }, code: 'missing_step_folder', file: 'steps/one/', mentions: ['"one"'] },
  { spec: 'Missing files: a step with no instruction.md', files: { 'task.toml': STEP(), 'steps/one/tests/test.sh': 'x' }, code: 'missing_step_instruction', file: 'steps/one/instruction.md', mentions: ['"one"'] },
  { spec: 'Missing files: a step with no test.sh in its own or the task\'s tests/', files: { 'task.toml': STEP(), 'tests/test.sh': undefined, 'tests/x': 'x', 'steps/one/instruction.md': 'x' }, code: 'missing_step_test', file: 'steps/one/tests/test.sh', mentions: ['"one"', 'tests/test.sh'] },
  // ---- Missing images ----
  { spec: 'Missing images: a separate verifier with no image (mode only, no docker_image, no tests/Dockerfile)', files: { 'task.toml': '[verifier]\nenvironment_mode = "separate"\n' }, code: 'separate_verifier_without_image', file: 'task.toml', mentions: ['verifier.environment_mode', 'tests/Dockerfile'] },
  { spec: 'Missing images: [verifier.environment] without docker_image and no tests/Dockerfile (no fallback to [environment])', files: { 'task.toml': '[environment]\ndocker_image = "x"\n[verifier.environment]\ncpus = 1\n' }, code: 'separate_verifier_without_image', file: 'task.toml', mentions: ['verifier.environment.docker_image'] },
  { spec: 'Missing images: neither docker_image nor environment/Dockerfile', files: { 'environment/Dockerfile': undefined }, code: 'missing_image', file: 'task.toml', mentions: ['docker_image', 'environment/Dockerfile'] },
  // ---- Unsupported settings ----
  { spec: 'Unsupported settings: Windows', files: { 'task.toml': '[environment]\nos = "windows"\n' }, code: 'unsupported_os', file: 'task.toml', mentions: ['environment.os', '"windows"'] },
  { spec: 'Unsupported settings: TPU', files: { 'task.toml': '[environment.tpu]\ntype = "v5"\n' }, code: 'unsupported_tpu', file: 'task.toml', mentions: ['environment.tpu'] },
  { spec: 'Unsupported settings: a shared verifier with its own environment', files: { 'task.toml': '[verifier]\nenvironment_mode = "shared"\n[verifier.environment]\ndocker_image = "x"\n' }, code: 'shared_verifier_with_environment', file: 'task.toml', mentions: ['verifier.environment'] },
  { spec: 'Unsupported settings (docs/design.md section 7, Compose groups): a key Berth cannot honour safely', files: { 'environment/docker-compose.yaml': 'services:\n  db:\n    image: x\n    network_mode: host\n' }, code: 'compose_unsupported', file: 'environment/docker-compose.yaml', mentions: ['services.db.network_mode', 'Fix:'] },
  // ---- Networks (Harbor 0.25: allowed_hosts, host / *.host / IP / CIDR) ----
  { spec: 'Harbor 0.25: allowed_hosts rejects URLs', files: { 'task.toml': '[environment]\nnetwork_mode = "allowlist"\nallowed_hosts = ["https://example.com/x"]\n' }, code: 'invalid_value', file: 'task.toml', mentions: ['environment.allowed_hosts[0]', 'not URLs'] },
  { spec: 'Harbor 0.25: allowed_hosts rejects ports', files: { 'task.toml': '[agent]\nnetwork_mode = "allowlist"\nallowed_hosts = ["example.com:443"]\n' }, code: 'invalid_value', file: 'task.toml', mentions: ['agent.allowed_hosts[0]'] },
  { spec: 'Harbor 0.25: a wildcard must lead', files: { 'task.toml': '[verifier]\nnetwork_mode = "allowlist"\nallowed_hosts = ["api.*.com"]\n' }, code: 'invalid_value', file: 'task.toml', mentions: ['verifier.allowed_hosts[0]', '"*."'] },
  { spec: 'Harbor 0.25: a range with host bits set is refused (Harbor reads CIDR strictly)', files: { 'task.toml': '[environment]\nnetwork_mode = "allowlist"\nallowed_hosts = ["10.0.0.1/8"]\n' }, code: 'invalid_value', file: 'task.toml', mentions: ['10.0.0.1/8'] },
  { spec: 'Harbor 0.25: allowed_hosts only with allowlist', files: { 'task.toml': '[environment]\nnetwork_mode = "public"\nallowed_hosts = ["example.com"]\n' }, code: 'invalid_value', file: 'task.toml', mentions: ['environment.allowed_hosts', 'allowlist'] },
  { spec: 'Harbor 0.25: a phase\'s allowed_hosts without its network_mode', files: { 'task.toml': `${STEP('[steps.agent]\nallowed_hosts = ["example.com"]\n')}`, ...STEP_FILES }, code: 'invalid_value', file: 'task.toml', mentions: ['steps[0]("one").agent.allowed_hosts', 'network_mode'] },
  // ---- Invalid values ----
  { spec: 'Invalid values: malformed task.toml', files: { 'task.toml': 'a = [\n' }, code: 'malformed_toml', file: 'task.toml', mentions: ['line ', 'not valid TOML'] },
  { spec: 'Invalid values: a wrong type', files: { 'task.toml': '[agent]\ntimeout_sec = "soon"\n' }, code: 'invalid_value', file: 'task.toml', mentions: ['agent.timeout_sec', '"soon"'] },
  { spec: 'Invalid values: an unknown strategy', files: { 'task.toml': 'multi_step_reward_strategy = "max"\n' }, code: 'invalid_value', file: 'task.toml', mentions: ['multi_step_reward_strategy', '"max"'] },
  { spec: 'Invalid values: a negative timeout', files: { 'task.toml': '[verifier]\ntimeout_sec = -1\n' }, code: 'invalid_value', file: 'task.toml', mentions: ['verifier.timeout_sec', '-1'] },
  { spec: 'Invalid values: a memory string without a unit', files: { 'task.toml': '[environment]\nmemory = "lots"\n' }, code: 'invalid_value', file: 'task.toml', mentions: ['environment.memory', '"lots"', 'memory_mb'] },
  { spec: 'Invalid values: a memory string with a unit Harbor does not read (issue 37: Harbor 0.25 refuses "2GB")', files: { 'task.toml': '[environment]\nmemory = "2GB"\n' }, code: 'invalid_value', file: 'task.toml', mentions: ['environment.memory', '"2GB"', 'no GB'] },
  { spec: 'Invalid values: memory conflicting with memory_mb', files: { 'task.toml': '[environment]\nmemory = "2G"\nmemory_mb = 1000\n' }, code: 'invalid_value', file: 'task.toml', mentions: ['conflicts'] },
  { spec: 'Invalid values: an MCP server without an endpoint (sse)', files: { 'task.toml': '[[environment.mcp_servers]]\nname = "m"\n' }, code: 'mcp_without_endpoint', file: 'task.toml', mentions: ['environment.mcp_servers[0]', 'url'] },
  { spec: 'Invalid values: an MCP stdio server without a command', files: { 'task.toml': '[[environment.mcp_servers]]\nname = "m"\ntransport = "stdio"\n' }, code: 'mcp_without_endpoint', file: 'task.toml', mentions: ['command'] },
  { spec: 'Invalid values: an artifact whose source is /', files: { 'task.toml': 'artifacts = ["/"]\n' }, code: 'invalid_artifact', file: 'task.toml', mentions: ['artifacts[0]', '"/"'] },
  { spec: 'Invalid values: an artifact under /tests', files: { 'task.toml': 'artifacts = ["/tests/x"]\n' }, code: 'invalid_artifact', file: 'task.toml', mentions: ['/tests'] },
  { spec: 'Invalid values: an artifact under /logs/verifier', files: { 'task.toml': 'artifacts = [{ source = "/logs/verifier" }]\n' }, code: 'invalid_artifact', file: 'task.toml', mentions: ['/logs/verifier'] },
  { spec: 'Invalid values: an artifact with a .. part', files: { 'task.toml': 'artifacts = ["/app/../etc"]\n' }, code: 'invalid_artifact', file: 'task.toml', mentions: ['".."'] },
  { spec: 'Invalid values: an absolute artifact destination', files: { 'task.toml': 'artifacts = [{ source = "/app", destination = "/abs" }]\n' }, code: 'invalid_artifact', file: 'task.toml', mentions: ['destination', '"/abs"'] },
  { spec: 'Invalid values: a step name that cannot be a folder', files: { 'task.toml': STEP('', '../x') }, code: 'invalid_value', file: 'task.toml', mentions: ['steps[0].name'] },
  { spec: 'Invalid values: task_data.json that is not JSON', files: { 'task_data.json': '{' }, code: 'invalid_value', file: 'task_data.json', mentions: ['JSON'] },
  // ---- Multi-step ----
  { spec: 'Multi-Step Harbor Tasks: two steps with one name', files: { 'task.toml': `${STEP()}${STEP()}`, ...STEP_FILES }, code: 'invalid_value', file: 'task.toml', mentions: ['steps[1].name'] },
  { spec: 'nemo_gym.data.tasks.harbor.verifier_env: a step verifier made shared cannot declare its own environment', files: { 'task.toml': STEP('[steps.verifier]\nenvironment_mode = "shared"\n[steps.verifier.environment]\ndocker_image = "x"\n'), ...STEP_FILES }, code: 'shared_verifier_with_environment', file: 'task.toml', mentions: ['steps[0]("one").verifier.environment'] },
  { spec: 'nemo_gym.data.tasks.harbor.verifier_env, step_verifier_build_context: a separate step with its own tests/ and no Dockerfile there has no image', files: { 'task.toml': STEP('[steps.verifier]\nenvironment_mode = "separate"\n'), ...STEP_FILES, 'tests/Dockerfile': 'FROM x' }, code: 'separate_verifier_without_image', file: 'task.toml', mentions: ['steps[0]("one").verifier.environment_mode', 'steps/one/tests/Dockerfile'] },
  { spec: 'nemo_gym.data.tasks.harbor.verifier_env, step_verifier_environment: a step environment without docker_image and no Dockerfile', files: { 'task.toml': STEP('[steps.verifier.environment]\ncpus = 1\n'), 'steps/one/instruction.md': 'x', 'tests/test.sh': 'x' }, code: 'separate_verifier_without_image', file: 'task.toml', mentions: ['steps[0]("one").verifier.environment.docker_image', 'tests/Dockerfile'] },
  // ---- tests/docker-compose.yaml ----
  { spec: 'Task Folder Verifiers § Shared and separate: tests/docker-compose.yaml top-level keys', files: { 'task.toml': '[verifier]\nenvironment_mode = "separate"\n', 'tests/Dockerfile': 'FROM x', 'tests/docker-compose.yaml': 'networks:\n  default:\n    internal: true\n' }, code: 'verifier_compose', file: 'tests/docker-compose.yaml', mentions: ['networks'] },
  { spec: 'Task Folder Verifiers § Shared and separate: only service main', files: { 'task.toml': '[verifier]\nenvironment_mode = "separate"\n', 'tests/Dockerfile': 'FROM x', 'tests/docker-compose.yaml': 'services:\n  main:\n    build: .\n  db:\n    image: postgres\n' }, code: 'verifier_compose', file: 'tests/docker-compose.yaml', mentions: ['services.db'] },
  { spec: 'Task Folder Verifiers § Shared and separate: main runtime keys', files: { 'task.toml': '[verifier]\nenvironment_mode = "separate"\n', 'tests/Dockerfile': 'FROM x', 'tests/docker-compose.yaml': 'services:\n  main:\n    network_mode: none\n' }, code: 'verifier_compose', file: 'tests/docker-compose.yaml', mentions: ['services.main.network_mode'] },
  { spec: 'Task Folder Verifiers § Shared and separate: a prebuilt verifier may only set a pull_policy other than build', files: { 'task.toml': '[verifier.environment]\ndocker_image = "v"\n', 'tests/docker-compose.yaml': 'services:\n  main:\n    pull_policy: build\n' }, code: 'verifier_compose', file: 'tests/docker-compose.yaml', mentions: ['pull_policy'] },
  { spec: 'Task Folder Verifiers § Shared and separate: a prebuilt verifier may not set image', files: { 'task.toml': '[verifier.environment]\ndocker_image = "v"\n', 'tests/docker-compose.yaml': 'services:\n  main:\n    image: other\n' }, code: 'verifier_compose', file: 'tests/docker-compose.yaml', mentions: ['services.main.image'] },
  // Issue 22: read with the YAML library (flow style too); what main sets is honoured or refused by name.
  { spec: 'Task Folder Verifiers § Shared and separate: a flow-style sidecar is still a sidecar', files: { 'task.toml': '[verifier]\nenvironment_mode = "separate"\n', 'tests/Dockerfile': 'FROM x', 'tests/docker-compose.yaml': '{services: {main: {build: .}, db: {image: postgres}}}\n' }, code: 'verifier_compose', file: 'tests/docker-compose.yaml', mentions: ['services.db'] },
  { spec: 'Task Folder Verifiers § Shared and separate: flow-style main runtime keys', files: { 'task.toml': '[verifier]\nenvironment_mode = "separate"\n', 'tests/Dockerfile': 'FROM x', 'tests/docker-compose.yaml': 'services:\n  main: {build: ., environment: {CHECK_MODE: strict}}\n' }, code: 'verifier_compose', file: 'tests/docker-compose.yaml', mentions: ['services.main.environment'] },
  { spec: 'Task Folder Verifiers § Shared and separate: a build key Berth does not honour', files: { 'task.toml': '[verifier]\nenvironment_mode = "separate"\n', 'tests/Dockerfile': 'FROM x', 'tests/docker-compose.yaml': 'services:\n  main:\n    build: {context: ., target: grader}\n' }, code: 'verifier_compose', file: 'tests/docker-compose.yaml', mentions: ['services.main.build.target'] },
  { spec: 'Task Folder Verifiers § Shared and separate: a build context other than tests/', files: { 'task.toml': '[verifier]\nenvironment_mode = "separate"\n', 'tests/Dockerfile': 'FROM x', 'tests/docker-compose.yaml': 'services:\n  main:\n    build: ../environment\n' }, code: 'verifier_compose', file: 'tests/docker-compose.yaml', mentions: ['services.main.build.context'] },
  { spec: 'Task Folder Verifiers § Shared and separate: build.dockerfile names a file that is not there', files: { 'task.toml': '[verifier]\nenvironment_mode = "separate"\n', 'tests/Dockerfile': 'FROM x', 'tests/docker-compose.yaml': 'services:\n  main:\n    build: {context: ., dockerfile: Grader.Dockerfile}\n' }, code: 'verifier_compose', file: 'tests/docker-compose.yaml', mentions: ['services.main.build.dockerfile', 'tests/Grader.Dockerfile'] },
  { spec: 'Task Folder Verifiers § Shared and separate: a built verifier with a pulling pull_policy', files: { 'task.toml': '[verifier]\nenvironment_mode = "separate"\n', 'tests/Dockerfile': 'FROM x', 'tests/docker-compose.yaml': 'services:\n  main:\n    build: .\n    pull_policy: missing\n' }, code: 'verifier_compose', file: 'tests/docker-compose.yaml', mentions: ['services.main.pull_policy', 'set it to build'] },
  { spec: 'Task Folder Verifiers § Shared and separate: a prebuilt verifier with pull_policy always', files: { 'task.toml': '[verifier.environment]\ndocker_image = "v"\n', 'tests/docker-compose.yaml': 'services: {main: {pull_policy: always}}\n' }, code: 'verifier_compose', file: 'tests/docker-compose.yaml', mentions: ['services.main.pull_policy', 'missing or never'] },
  { spec: 'Task Folder Verifiers § Shared and separate: a tests/docker-compose.yaml that is not YAML', files: { 'task.toml': '[verifier]\nenvironment_mode = "separate"\n', 'tests/Dockerfile': 'FROM x', 'tests/docker-compose.yaml': 'services: {main: [}\n' }, code: 'verifier_compose', file: 'tests/docker-compose.yaml', mentions: ['YAML'] },
  { spec: 'docs/design.md section 7 Compose groups: a sidecar pull_policy that pulls again', files: { 'environment/docker-compose.yaml': 'services:\n  main: {}\n  db:\n    image: x\n    pull_policy: always\n' }, code: 'compose_unsupported', file: 'environment/docker-compose.yaml', mentions: ['services.db.pull_policy', 'missing or never'] },
  { spec: 'docs/design.md section 7 Compose groups: pull_policy build without a build section', files: { 'environment/docker-compose.yaml': 'services:\n  main: {}\n  db:\n    image: x\n    pull_policy: build\n' }, code: 'compose_unsupported', file: 'environment/docker-compose.yaml', mentions: ['services.db.pull_policy', 'build section'] },
];

describe('what the loader refuses', () => {
  for (const row of rows) {
    const name = /^(Task Folder|Multi-Step|nemo_gym|docs\/design|Harbor 0.25)/.test(row.spec) ? row.spec : `Task Folder Format § What the loader refuses, ${row.spec}`;
    it(name, () => {
      const r = expectRefusal(build(row.files, {}, row.dirs));
      expect(r.code).toBe(row.code);
      expect(r.file).toBe(`/data/demo/${row.file}`);
      expect(r.task_id).toBe('demo');
      expect(r.path).toBe('/data/demo');
      expect(r.stage).toBe('load');
      expect(r.message.startsWith(`/data/demo/${row.file}`)).toBe(true);
      expect(r.message).toContain('Fix: ');
      for (const m of row.mentions) expect(r.message).toContain(m);
    });
  }

  // Task Folder Verifiers § Sidecar inputs: "Each entry is a plain top-level file name: no path
  // separators, no *, ? or [, and no grader output such as reward.json".
  const inputs: Array<[string, string, string]> = [
    ['a path separator', 'a/b', 'path separator'],
    ['a parent reference', '..', 'file name'],
    ['a pattern', '*.jsonl', 'pattern'],
    ['a bracket pattern', 'a[1]', 'pattern'],
    ['grader output', 'reward.json', 'grader output'],
    ['grader output', 'reward.txt', 'grader output'],
  ];
  for (const [name, input, mention] of inputs) {
    it(`Task Folder Verifiers § Sidecar inputs, a bad inputs entry in dataset.toml (${name})`, () => {
      const r = expectRefusal(build({}, { override: { verifier: { inputs: [input] } } }));
      expect(r.code).toBe('invalid_input');
      expect(r.message).toContain(`/data/dataset.toml: gym.tasks."demo".verifier.inputs[0] = ${JSON.stringify(input)}`);
      expect(r.message).toContain(mention);
      expect(r.message).toContain('Fix: ');
    });
  }

  it('Task Folder Verifiers § Shared and separate verification: a shared verifier ignores tests/docker-compose.yaml', () => {
    expect(build({ 'tests/docker-compose.yaml': 'services:\n  db:\n    image: x\n' })).not.toBeInstanceOf(Error);
  });
});

describe('Missing images: an image with no record from prepare (Task Folder Format § What the loader refuses)', () => {
  const none = (): boolean => false;
  const rows: Array<[string, Record<string, string | undefined>, string, string]> = [
    ['a build-mode Dockerfile', { 'environment/Dockerfile': 'FROM x\nCOPY a b\n' }, 'environment/Dockerfile', 'environment/Dockerfile'],
    ['a pull-mode base image', {}, 'environment/Dockerfile', '"ubuntu:24.04"'],
    ['a tests/Dockerfile', { 'task.toml': '[verifier]\nenvironment_mode = "separate"\n[environment]\ndocker_image = "x"\n[verifier.environment]\ncpus = 1\n', 'environment/Dockerfile': undefined, 'tests/Dockerfile': 'FROM y' }, 'tests/Dockerfile', 'tests/Dockerfile'],
  ];
  for (const [name, files, file, mention] of rows) {
    it(name, () => {
      const r = expectRefusal(build(files, { imageRecorded: (need) => (name === 'a tests/Dockerfile' ? need.kind !== 'build' : none()) }));
      expect(r.code).toBe('missing_image');
      expect(r.file).toBe(`/data/demo/${file}`);
      expect(r.message).toContain(mention);
      expect(r.message).toContain('berth prepare');
    });
  }

  it('a prebuilt docker_image needs no record, and recorded images load', () => {
    expect(build({ 'task.toml': '[environment]\ndocker_image = "x"\n', 'environment/Dockerfile': undefined }, { imageRecorded: none })).not.toBeInstanceOf(Error);
    expect(build({}, { imageRecorded: () => true })).not.toBeInstanceOf(Error);
  });
});

describe('Task Folder Format § Current limitations: a transcript-seeded task runs only with the oracle', () => {
  it('is refused for another agent, naming the file', () => {
    const r = expectRefusal(build({ 'trajectory.json': '{}' }, { agent: 'openai' }));
    expect(r.code).toBe('unsupported_transcript');
    expect(r.file).toBe('/data/demo/trajectory.json');
    expect(r.message).toContain('--agent oracle');
  });
  it('loads for the oracle, with no agent named, or with --allow-unsupported-pairing', () => {
    for (const c of [{ agent: 'oracle' }, {}, { agent: 'openai', allowUnsupportedPairing: true }]) {
      expect(build({ 'trajectory.json': '{}' }, c)).not.toBeInstanceOf(Error);
    }
  });
  it('the first step\'s transcript counts for a multi-step task', () => {
    const r = expectRefusal(
      build({ 'task.toml': '[[steps]]\nname = "one"\n', 'steps/one/instruction.md': 'x', 'steps/one/tests/test.sh': 'x', 'steps/one/trajectory.json': '{}' }, { agent: 'nop' }),
    );
    expect(r.file).toBe('/data/demo/steps/one/trajectory.json');
  });
});
