import { afterAll, describe, expect, it } from 'vitest';
import { Client, Connection } from '@temporalio/client';
import Docker from 'dockerode';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createHash } from 'node:crypto';
import { copyFileSync, cpSync, existsSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { startBatch } from '../../src/client/batch.ts';
import { hostPollers } from '../../src/config/pollers.ts';
import { homePath } from '../../src/config/paths.ts';
import { repoRoot } from '../helpers/cli.ts';
import { testHostQueue } from '../helpers/host-slots.ts';
import { echoTask, writeDataset } from '../helpers/tasks.ts';
import { waitUntil } from '../helpers/worker-process.ts';

const run = promisify(execFile);
const ADDRESS = '127.0.0.1:7233';
/** Debian's Docker client: the newer one on PATH refuses the classic builder's builds less quietly. */
const DOCKER = '/usr/bin/docker';
const build = (args: string[]) => run(DOCKER, ['build', '-q', ...args], { env: { ...process.env, DOCKER_BUILDKIT: '0' }, maxBuffer: 64 * 1024 * 1024, timeout: 900_000 });

/**
 * A Node base image made here without a registry, the way an air-gapped site makes its mirror's: the base image
 * plus this machine's Node binary and npm (Debian's nodejs is 18; Berth needs 20), and this machine's CA bundle so
 * npm reaches its registry through the local route (measured on this kind of machine, Package registries from inside a
 * container).
 */
async function nodeBaseImage(): Promise<string> {
  const ctx = mkdtempSync(join(tmpdir(), 'berth-node-base-'));
  copyFileSync(realpathSync(process.execPath), join(ctx, 'node'));
  cpSync(dirname(dirname(realpathSync(join(dirname(process.execPath), 'npm')))), join(ctx, 'npm'), { recursive: true });
  copyFileSync('/etc/ssl/certs/ca-certificates.crt', join(ctx, 'ca.crt'));
  writeFileSync(join(ctx, 'Dockerfile'), [
    'FROM berth-base:bookworm',
    'COPY node /usr/local/bin/node',
    'COPY npm /usr/local/lib/node_modules/npm',
    'COPY ca.crt /usr/local/share/berth-ca.crt',
    'RUN ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm && node --version && npm --version',
    'ENV NODE_EXTRA_CA_CERTS=/usr/local/share/berth-ca.crt',
    '',
  ].join('\n'));
  const tag = `berth-test-node:${process.versions.node}`;
  await build(['-t', tag, ctx]);
  return tag;
}

/**
 * An npm cache holding the lockfile's production packages, filled once per lockfile and kept under BERTH_HOME, so a
 * second run's build context is the same and the engine's build cache skips the install.
 */
async function npmCache(): Promise<string> {
  const lock = readFileSync(join(repoRoot, 'package-lock.json'));
  const dir = homePath('test-cache', `npm-${createHash('sha256').update(lock).digest('hex').slice(0, 16)}`);
  if (existsSync(join(dir, 'done'))) return join(dir, 'cache');
  const install = mkdtempSync(join(tmpdir(), 'berth-worker-npm-'));
  for (const f of ['package.json', 'package-lock.json']) copyFileSync(join(repoRoot, f), join(install, f));
  rmSync(dir, { recursive: true, force: true });
  await run('npm', ['ci', '--omit=dev', '--ignore-scripts', '--no-audit', '--no-fund', '--prefer-offline', '--cache', join(dir, 'cache')], { cwd: install, timeout: 600_000 });
  rmSync(join(dir, 'cache', '_logs'), { recursive: true, force: true });
  rmSync(install, { recursive: true, force: true });
  writeFileSync(join(dir, 'done'), '');
  return join(dir, 'cache');
}

// docs/design.md section 5, Deployment beyond one machine; docs/deployment.md: the worker service of docker-compose.yaml.
describe('the deployment\'s worker image, built and run', () => {
  const docker = new Docker();
  const name = `berth-test-worker-${randomBytes(3).toString('hex')}`;
  let connection: Connection | undefined;
  afterAll(async () => {
    await docker.getContainer(name).remove({ force: true }).catch(() => undefined);
    await connection?.close();
  });

  it('builds from the repo\'s Dockerfile with a local Node base, and runs an episode through the mounted engine socket', async () => {
    const base = await nodeBaseImage();
    // The build context as a site without a registry makes it: the repo's files and an npm cache filled here. The
    // build runs with no network at all.
    const ctx = mkdtempSync(join(tmpdir(), 'berth-worker-ctx-'));
    for (const f of ['Dockerfile', '.dockerignore', 'package.json', 'package-lock.json', 'bin', 'src']) cpSync(join(repoRoot, f), join(ctx, f), { recursive: true });
    cpSync(await npmCache(), join(ctx, 'npm-cache'), { recursive: true });
    await build(['--network', 'none', '--build-arg', `NODE_IMAGE=${base}`, '-t', 'berth-test-worker:latest', ctx]);

    const suffix = `deploy-${randomBytes(3).toString('hex')}`;
    const dataset = writeDataset(echoTask('hello'));
    const home = mkdtempSync(join(tmpdir(), 'berth-worker-home-'));
    const worker = await docker.createContainer({
      name, Image: 'berth-test-worker:latest',
      Env: [`TEMPORAL_ADDRESS=${ADDRESS}`, `BERTH_TASK_QUEUE=test-${suffix}`, `BERTH_HOST_QUEUE_SUFFIX=${suffix}`, 'BERTH_WORKER_SLOTS=2', 'BERTH_JANITOR_AT_START=0'],
      HostConfig: {
        // The test's Temporal server listens on this machine's loopback.
        NetworkMode: 'host',
        Binds: ['/var/run/docker.sock:/var/run/docker.sock', `${dataset}:${dataset}:ro`, `${home}:/var/lib/berth`],
      },
    });
    await worker.start();
    const logs = async () => (await worker.logs({ stdout: true, stderr: true })).toString();
    await waitUntil(async () => (await hostPollers(ADDRESS, 'default', await testHostQueue(suffix))).length > 0, 120_000, 'the containerized worker polling')
      .catch(async (err: Error) => { throw new Error(`${err.message}\n${await logs()}`); });

    connection = await Connection.connect({ address: ADDRESS });
    const summary = await (await startBatch({ dataset, resultsDir: mkdtempSync(join(tmpdir(), 'berth-deploy-')), taskQueue: `test-${suffix}`, client: new Client({ connection }) })).wait();
    expect(summary.rows[0], await logs()).toMatchObject({ task_id: 'hello', reward: 1, mask_sample: false, host: String((await docker.info()).Name) });
    expect(summary.rows[0]!.logs_dir).toMatch(/^\/var\/lib\/berth\//);
  }, 900_000);
});
