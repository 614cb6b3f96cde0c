// Issue 37, valid tasks refused: what Harbor 0.25 reads as a Compose file, its own `main` restated in a task's file
// (as its Terminal-Bench mapper, harbor/mappers/terminal_bench.py, writes into every Compose task it converts), main's
// network_mode "none", and the variables Berth gives such a file. What Harbor did with the same tiny tasks
// (`harbor trials start -a oracle`) is said beside each; the engine tests are in harbor-main.test.ts.
import { describe, expect, it } from 'vitest';
import { groupModel, mainLaunchOverride, type ComposeModel } from '../../src/sandbox/compose/model.ts';
import { readComposePlan } from '../../src/task/compose.ts';
import { composeInterpolationEnv, harborComposeVariables } from '../../src/task/compose-variables.ts';
import type { Task } from '../../src/task/index.ts';
import { build, expectRefusal } from '../task/helpers.ts';

const FILE = 'environment/docker-compose.yaml';

/** main as the mapper restates Harbor's template over a Terminal-Bench task's client service, and a sidecar. */
export const MAPPED_MAIN = `services:
  main:
    build:
      context: \${CONTEXT_DIR}
    image: \${MAIN_IMAGE_NAME}
    command: [sh, -c, "sleep infinity"]
    environment:
      - TEST_DIR=\${TEST_DIR}
    deploy:
      resources:
        limits:
          cpus: \${CPUS}
          memory: \${MEMORY}
    working_dir: /app
  cache:
    image: redis:7
`;

/** The loader's refusal of a task with `text` as its environment/docker-compose.yaml. */
const refusalOf = (text: string) => expectRefusal(build({ [FILE]: text }));

describe('Harbor\'s own main restated loads (Harbor 0.25 ran the mapper\'s main with a sidecar: reward 1)', () => {
  it('reads the mapper\'s main and its sidecar', () => {
    const plan = readComposePlan(FILE, MAPPED_MAIN, undefined);
    expect(plan.services).toEqual(['main', 'cache']);
    expect(plan.main_offline).toBe(false);
  });

  it.each([
    ['image $MAIN_IMAGE_NAME', 'services:\n  main:\n    image: $MAIN_IMAGE_NAME\n'],
    ['the prebuilt template\'s image', 'services:\n  main:\n    image: ${PREBUILT_IMAGE_NAME}\n'],
    ['build of the environment folder as a path', 'services:\n  main:\n    build: .\n'],
    ['build of the environment folder as ./', 'services:\n  main:\n    build:\n      context: ./\n'],
    ['build: ${CONTEXT_DIR}', 'services:\n  main:\n    build: ${CONTEXT_DIR}\n'],
    ['the mapper\'s own log mounts on main', 'services:\n  main:\n    volumes:\n      - ${HOST_VERIFIER_LOGS_PATH}:${ENV_VERIFIER_LOGS_PATH}\n      - ${HOST_AGENT_LOGS_PATH}:${ENV_AGENT_LOGS_PATH}\n'],
  ])('reads %s', (_what, text) => {
    expect(readComposePlan(FILE, text, undefined).services).toEqual(['main']);
  });

  it.each([
    ['another image variable', 'services:\n  main:\n    image: ${MY_IMAGE}\n', 'services.main.image'],
    ['an image of its own', 'services:\n  main:\n    image: ubuntu:24.04\n', 'services.main.image'],
    ['a build with a target', 'services:\n  main:\n    build:\n      context: ${CONTEXT_DIR}\n      target: dev\n', 'services.main.build'],
    ['a build of another folder', 'services:\n  main:\n    build: ../tests\n', 'services.main.build'],
    ['network_mode host', 'services:\n  main:\n    network_mode: host\n', 'services.main.network_mode'],
  ])('still refuses %s', (_what, text, key) => {
    const d = refusalOf(text);
    expect(d.code).toBe('compose_unsupported');
    expect(d.key).toBe(key);
  });

  it('refuses a sidecar that shares main\'s log folder through the host, naming the fix', () => {
    const d = refusalOf('services:\n  main: {}\n  side:\n    image: busybox\n    volumes:\n      - ${HOST_VERIFIER_LOGS_PATH}:/shared\n');
    expect(d.key).toBe('services.side.volumes[0]');
    expect(d.fix).toContain('artifact');
  });

  it('loads the whole task, and a separate verifier whose tests/docker-compose.yaml builds ${CONTEXT_DIR}', () => {
    const t = build({
      'environment/docker-compose.yaml': MAPPED_MAIN,
      'task.toml': '[environment]\ncpus = 1\nmemory_mb = 1024\n[verifier]\nenvironment_mode = "separate"\n',
      'tests/Dockerfile': 'FROM python:3.12\n',
      'tests/docker-compose.yaml': 'services:\n  main:\n    image: ${MAIN_IMAGE_NAME}\n    build:\n      context: ${CONTEXT_DIR}\n',
    });
    if (!('id' in t)) throw new Error(`refused: ${t.problem}`);
    expect(t.compose?.services).toEqual(['main', 'cache']);
    // ${MAIN_IMAGE_NAME} is Harbor's own name for the image, not a tag of the task's.
    expect(t.verifier.image).toMatchObject({ kind: 'build', context: 'tests', dockerfile: 'tests/Dockerfile', pinned_image: null });
  });
});

describe('main\'s network_mode "none" (Harbor 0.25: main had only lo and could not resolve its sidecar; reward 1)', () => {
  it('loads, and says main runs on no network', () => {
    const plan = readComposePlan(FILE, 'services:\n  main:\n    network_mode: "none"\n  side:\n    image: busybox\n', undefined);
    expect(plan.main_offline).toBe(true);
    expect(plan.services).toEqual(['main', 'side']);
  });
});

describe('a main on no network keeps every phase in main at the group\'s baseline', () => {
  const offline = 'services:\n  main:\n    network_mode: none\n  side:\n    image: busybox\n';

  it('sets aside an agent or shared verifier policy of its own, with a warning naming it', () => {
    const t = build({
      'environment/docker-compose.yaml': offline,
      'task.toml': '[environment]\nnetwork_mode = "no-network"\n[agent]\nnetwork_mode = "allowlist"\nallowed_hosts = ["example.com"]\n[verifier]\nnetwork_mode = "public"\n',
    });
    if (!('id' in t)) throw new Error(`refused: ${t.problem}`);
    expect([t.agent.network_mode, t.agent.allowed_hosts, t.verifier.network_mode]).toEqual(['no-network', [], 'no-network']);
    expect(t.warnings.filter((w) => w.includes('network_mode "none"'))).toHaveLength(2);
  });

  it('leaves a task whose phases already share the baseline as it is', () => {
    const t = build({ 'environment/docker-compose.yaml': offline });
    if (!('id' in t)) throw new Error(`refused: ${t.problem}`);
    expect([t.environment.network_mode, t.agent.network_mode, t.verifier.network_mode]).toEqual(['public', 'public', 'public']);
    expect(t.warnings).toEqual([]);
  });
});

describe('only docker-compose.yaml is a Compose file (Harbor 0.25 copied both .yml files like any other: reward 1)', () => {
  it('a task with environment/docker-compose.yml is a single sandbox built from its Dockerfile', () => {
    const t = build({ 'environment/docker-compose.yml': 'services:\n  web:\n    image: nginx\n    privileged: true\n' });
    if (!('id' in t)) throw new Error(`refused: ${t.problem}`);
    expect(t.compose).toBeNull();
    expect(t.image.dockerfile).toBe('environment/Dockerfile');
  });

  it('a prebuilt task uploads environment/ with its docker-compose.yml', () => {
    const t = build({ 'environment/Dockerfile': undefined, 'environment/docker-compose.yml': 'services: {}\n', 'task.toml': '[environment]\ndocker_image = "ubuntu:24.04"\n' });
    if (!('id' in t)) throw new Error(`refused: ${t.problem}`);
    expect(t.compose).toBeNull();
    expect(t.image.upload_environment_files).toBe(true);
  });

  it('a separate verifier\'s tests/docker-compose.yml is exercise material, not its compose file', () => {
    const t = build({
      'task.toml': '[verifier]\nenvironment_mode = "separate"\n',
      'tests/Dockerfile': 'FROM python:3.12\n',
      'tests/docker-compose.yml': 'services:\n  db:\n    image: postgres\n',
    });
    if (!('id' in t)) throw new Error(`refused: ${t.problem}`);
    expect(t.verifier.image).toMatchObject({ kind: 'build', dockerfile: 'tests/Dockerfile' });
  });

  it('the same files named .yaml are read, and refused where they ask what Berth does not run', () => {
    expect(expectRefusal(build({ 'environment/docker-compose.yaml': 'services:\n  web:\n    image: nginx\n    privileged: true\n' })).code).toBe('compose_unsupported');
    expect(expectRefusal(build({ 'task.toml': '[verifier]\nenvironment_mode = "separate"\n', 'tests/Dockerfile': 'FROM x', 'tests/docker-compose.yaml': 'services:\n  db:\n    image: postgres\n' })).code).toBe('verifier_compose');
  });
});

describe('the variables Berth gives a compose file (Harbor\'s ComposeInfraEnvVars and log paths, Berth\'s values)', () => {
  const task = { path: '/data/t', environment: { cpus: 2, memory_mb: 1024 } } as unknown as Pick<Task, 'path' | 'environment'>;

  it('names main\'s image, the environment folder, the task\'s size and main\'s log folders', () => {
    expect(harborComposeVariables(task, 'img:1', { cpus: 8, memoryMb: 16000 })).toEqual({
      MAIN_IMAGE_NAME: 'img:1',
      PREBUILT_IMAGE_NAME: 'img:1',
      CONTEXT_DIR: '/data/t/environment',
      CPUS: '2',
      MEMORY: '1024M',
      ENV_AGENT_LOGS_PATH: '/logs/agent',
      HOST_AGENT_LOGS_PATH: '/logs/agent',
      ENV_VERIFIER_LOGS_PATH: '/logs/verifier',
      HOST_VERIFIER_LOGS_PATH: '/logs/verifier',
      ENV_ARTIFACTS_PATH: '/logs/artifacts',
      HOST_ARTIFACTS_PATH: '/logs/artifacts',
    });
  });

  it('they win over the worker\'s and the task\'s variables, as Harbor\'s do; TEST_DIR is only a default', () => {
    expect(composeInterpolationEnv(task, 'img:1', { CPUS: '64', PATH: '/bin' }, { MAIN_IMAGE_NAME: 'mine' })).toMatchObject({ CPUS: '2', MAIN_IMAGE_NAME: 'img:1', PATH: '/bin', TEST_DIR: '/tests' });
    expect(composeInterpolationEnv(task, 'img:1', { TEST_DIR: '/host' }, {}).TEST_DIR).toBe('/host');
    expect(composeInterpolationEnv(task, 'img:1', { TEST_DIR: '/host' }, { TEST_DIR: '/task' }).TEST_DIR).toBe('/task');
  });

  it('a task without a size gets the host\'s, which limits nothing (Compose refuses a blank cpus or memory)', () => {
    const bare = { ...task, environment: { cpus: null, memory_mb: null } } as unknown as Pick<Task, 'path' | 'environment'>;
    expect(harborComposeVariables(bare, 'img:1', { cpus: 8, memoryMb: 16000 })).toMatchObject({ CPUS: '8', MEMORY: '16000M' });
  });
});

describe('the restated lines change nothing in the project Berth runs', () => {
  const resolved = (main: Record<string, unknown>): ComposeModel => ({ services: { main: { image: 'x', ...main } } });

  it.each([
    [['sh', '-c', 'sleep infinity']],
    [['sleep', 'infinity']],
  ])('main\'s command %j is Harbor\'s keep-alive: no command of the task\'s', (command) => {
    expect(mainLaunchOverride(resolved({ command })).command).toBeNull();
  });

  it('another command on main is the task\'s', () => {
    expect(mainLaunchOverride(resolved({ command: ['sh', '-c', 'sleep 5'] })).command).toEqual(['sh', '-c', 'sleep 5']);
  });

  it('main\'s log folders bound onto themselves are dropped; its other mounts stay', () => {
    const model = groupModel(resolved({
      volumes: [
        { type: 'bind', source: '/logs/verifier', target: '/logs/verifier' },
        { type: 'bind', source: '/logs/agent', target: '/logs/agent' },
        { type: 'bind', source: '/data/t/environment/fixtures', target: '/logs/artifacts' },
        { type: 'volume', source: 'data', target: '/data' },
      ],
    }), { project: 'p', labels: {}, networks: {}, images: {}, main: { image: 'img', keepAlive: ['sleep', 'infinity'], env: {}, labels: {} } });
    expect(model.services.main!.volumes).toEqual([
      { type: 'bind', source: '/data/t/environment/fixtures', target: '/logs/artifacts' },
      { type: 'volume', source: 'data', target: '/data' },
    ]);
  });
});
