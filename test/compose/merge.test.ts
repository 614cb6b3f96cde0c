// Berth merges a task's compose file over its `main` as Harbor does, compared with the real tool:
// Harbor's Docker environment stacks its base template, its build template and the task's file
// (Harbor 0.25, Compose stack); `docker compose config` of that stack is what
// Harbor runs. Berth's resolved model must agree on every sidecar and on what the task says of main.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { composeBinary } from '../../src/sandbox/compose/cli.ts';
import { resolveComposeModel } from '../../src/sandbox/docker/compose-group.ts';
import { groupModel, type ComposeModel, type ComposeService } from '../../src/sandbox/compose/model.ts';
import { CORPUS } from '../task/helpers.ts';

const dir = mkdtempSync(join(tmpdir(), 'berth-merge-'));
// Harbor's templates as its Docker environment writes them (the variables are filled from its trial).
const HARBOR_BASE = join(dir, 'docker-compose-base.yaml');
writeFileSync(HARBOR_BASE, `services:
  main:
    volumes:
      - \${HOST_VERIFIER_LOGS_PATH}:\${ENV_VERIFIER_LOGS_PATH}
      - \${HOST_AGENT_LOGS_PATH}:\${ENV_AGENT_LOGS_PATH}
      - \${HOST_ARTIFACTS_PATH}:\${ENV_ARTIFACTS_PATH}
    deploy:
      resources:
        limits:
          cpus: \${CPUS}
          memory: \${MEMORY}
`);
const HARBOR_BUILD = join(dir, 'docker-compose-build.yaml');
writeFileSync(HARBOR_BUILD, `services:
  main:
    build:
      context: \${CONTEXT_DIR}
    image: \${MAIN_IMAGE_NAME}
    pull_policy: build
    command: [ "sh", "-c", "sleep infinity" ]
`);
const HARBOR_KEYS = ['build', 'image', 'pull_policy', 'command', 'deploy', 'entrypoint'];

const env = { ...process.env, WITAN_API_URL: 'http://witan.example', WITAN_API_KEY: 'k', QUERY_BUDGET: '12' };

function harborConfig(task: string, project: string): ComposeModel {
  const envDir = join(task, 'environment');
  const r = spawnSync(composeBinary(), [
    '--project-name', project, '--project-directory', envDir,
    '-f', HARBOR_BASE, '-f', HARBOR_BUILD, '-f', join(envDir, 'docker-compose.yaml'), 'config', '--format', 'json',
  ], {
    encoding: 'utf8',
    env: {
      ...env, CONTEXT_DIR: envDir, MAIN_IMAGE_NAME: 'hb__main', CPUS: '1', MEMORY: '2048M',
      HOST_VERIFIER_LOGS_PATH: '/trial/verifier', ENV_VERIFIER_LOGS_PATH: '/logs/verifier',
      HOST_AGENT_LOGS_PATH: '/trial/agent', ENV_AGENT_LOGS_PATH: '/logs/agent',
      HOST_ARTIFACTS_PATH: '/trial/artifacts', ENV_ARTIFACTS_PATH: '/logs/artifacts',
    },
  });
  expect(r.status, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as ComposeModel;
}

/** main as the task's file shapes it: Harbor's own template keys and log mounts left out. */
function taskPartOfMain(main: ComposeService, harbor: boolean): ComposeService {
  const out: ComposeService = { ...main };
  for (const k of harbor ? HARBOR_KEYS : ['image', 'entrypoint', 'command']) delete out[k];
  const volumes = (main.volumes as { source?: string }[] | undefined)?.filter((v) => !(v.source ?? '').startsWith('/trial/'));
  if (volumes && volumes.length > 0) out.volumes = volumes;
  else delete out.volumes;
  return out;
}

describe('a corpus Compose task merged over main, as Harbor merges it', () => {
  it.each([
    'harbor-cookbook/multi-container',
    'harbor-cookbook/mcp-tools',
    'harbor-examples/environment-env-multi',
    'harbor-examples/sidecar-artifacts',
    'mimic-bench/chart-area',
  ])('%s', async (rel) => {
    const task = join(CORPUS, rel);
    const project = 'berth-merge-check';
    const harbor = harborConfig(task, project);
    const berth = await resolveComposeModel({
      project, composeFile: join(task, 'environment', 'docker-compose.yaml'), projectDir: join(task, 'environment'),
      interpolationEnv: env, main: { image: 'hb__main', keepAlive: [], env: {}, user: 'root', workdir: '/' },
    }, mkdtempSync(join(dir, 'state-')));

    expect(Object.keys(berth.services).sort()).toEqual(Object.keys(harbor.services).sort());
    for (const name of Object.keys(harbor.services).filter((n) => n !== 'main')) {
      expect(berth.services[name], `sidecar ${name}`).toEqual(harbor.services[name]);
    }
    expect(taskPartOfMain(berth.services.main!, false)).toEqual(taskPartOfMain(harbor.services.main!, true));
    expect(berth.volumes ?? {}).toEqual(harbor.volumes ?? {});

    // What `up` then runs keeps every sidecar as Compose resolved it, adding only Berth's labels.
    const final = groupModel(berth, {
      project, labels: { 'berth.group': project }, networks: { default: `${project}_default` }, images: {},
      main: { image: 'hb__main', keepAlive: ['/bin/sh', '-c', 'exec sleep infinity'], env: { TASK: '1' }, labels: {} },
    });
    for (const name of Object.keys(harbor.services).filter((n) => n !== 'main')) {
      const { labels, ...rest } = final.services[name]!;
      expect(rest).toEqual(harbor.services[name]);
      expect(labels).toEqual({ ...(harbor.services[name]!.labels ?? {}), 'berth.group': project });
    }
    expect(final.networks).toEqual({ default: { name: `${project}_default`, external: true } });
  });

  it('keeps $$ escaped through Berth\'s model, so Compose reads the same literal $ again', async () => {
    const task = join(CORPUS, 'harbor-examples/environment-env-multi');
    const berth = await resolveComposeModel({
      project: 'berth-merge-dollar', composeFile: join(task, 'environment', 'docker-compose.yaml'), projectDir: join(task, 'environment'),
      interpolationEnv: { ...process.env, HARBOR_STARTUP_ENV_TEST: 'must-not-appear' },
      main: { image: 'hb__main', keepAlive: [], env: {}, user: 'root', workdir: '/' },
    }, mkdtempSync(join(dir, 'state-')));
    expect(berth.services.sidecar!.command!.join(' ')).toContain('$${HARBOR_STARTUP_ENV_TEST-unset}');
    expect(JSON.stringify(berth)).not.toContain('must-not-appear');
  });
});

describe('Berth\'s variables for every sidecar (a task whose network switches by phase; issue 14)', () => {
  it('reach each sidecar over its own environment, escaped for Compose, and never main through this path', () => {
    const model = groupModel({ services: { main: { image: 'm' }, db: { image: 'd', environment: { OWN: '1', HTTP_PROXY: 'theirs' } } } }, {
      project: 'p', labels: {}, networks: {}, images: {},
      main: { image: 'm', keepAlive: ['sleep'], env: { MAIN_ONLY: '1' }, labels: {} },
      sidecarEnv: { HTTP_PROXY: 'http://10.0.0.1:3128', NO_PROXY: 'main,db,$x' },
    });
    expect(model.services.db!.environment).toEqual({ OWN: '1', HTTP_PROXY: 'http://10.0.0.1:3128', NO_PROXY: 'main,db,$$x' });
    expect(model.services.main!.environment).toEqual({ MAIN_ONLY: '1' });
  });
});
