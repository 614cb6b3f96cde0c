import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { repoRoot } from '../helpers/cli.ts';

// Berth as a user without a checkout has it (issue 38): `npm pack` of this checkout, installed with
// `npm install -g --prefix` into a fresh folder, run from a folder that is not the checkout. The batches run on a
// worker the installed `berth` starts itself (detached, from the package), on queues and a BERTH_HOME of this test.
const work = mkdtempSync(join(tmpdir(), 'berth-package-'));
const prefix = join(work, 'prefix');
const installed = join(prefix, 'lib', 'node_modules', 'berth');
const bin = join(prefix, 'bin', 'berth');
const suffix = `package-${randomBytes(3).toString('hex')}`;
const env = {
  ...process.env, NO_COLOR: '1', BERTH_HOME: join(work, 'home'), BERTH_TASK_QUEUE: `test-${suffix}`, BERTH_HOST_QUEUE_SUFFIX: suffix,
};

interface Ran { code: number; stdout: string; stderr: string }

/** Without blocking this process (vitest's messages to its main process time out on a loaded machine otherwise). */
function run(cmd: string, args: string[], cwd: string, timeoutMs: number, extraEnv: Record<string, string> = {}): Promise<Ran> {
  return new Promise((resolve) => {
    execFile(cmd, args, { cwd, env: { ...env, ...extraEnv }, encoding: 'utf8', timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) => {
      resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

// A folder of the user's own with a copy of examples/hello: nothing of the checkout is in reach of the command.
const project = join(work, 'project');

beforeAll(async () => {
  const packed = await run('npm', ['pack', '--pack-destination', work], repoRoot, 900_000);
  expect(packed.code, packed.stderr).toBe(0);
  const tgz = readdirSync(work).find((f) => /^berth-.*\.tgz$/.test(f));
  expect(tgz, packed.stdout).toBeDefined();
  const install = await run('npm', ['install', '-g', '--prefix', prefix, '--no-audit', '--no-fund', '--prefer-offline', join(work, tgz!)], work, 900_000);
  expect(install.code, install.stderr).toBe(0);
  mkdirSync(project);
  cpSync(join(repoRoot, 'examples', 'hello'), join(project, 'hello'), { recursive: true });
  // The worker both batches below run on (berth run would start it too; the client library expects it running).
  const started = await run(bin, ['server', 'start'], work, 300_000);
  expect(started.code, started.stderr).toBe(0);
}, 2_200_000);

afterAll(async () => {
  if (existsSync(bin)) await run(bin, ['server', 'stop'], work, 60_000);
  rmSync(work, { recursive: true, force: true });
}, 120_000);

describe('the packed package, installed with npm install -g', () => {
  it('ships compiled JavaScript and what Berth reads at run time, and no TypeScript source', () => {
    expect(existsSync(join(installed, 'src'))).toBe(false);
    expect(existsSync(join(installed, 'dist', 'cli', 'main.js'))).toBe(true);
    expect(existsSync(join(installed, 'dist', 'workflows', 'index.js'))).toBe(true);
    expect(existsSync(join(installed, 'dist', 'verify', 'shim', 'run_verifier.py'))).toBe(true);
    expect(existsSync(join(installed, 'scripts', 'setup.sh'))).toBe(true);
  });

  it('berth --help lists the commands, berth setup among them', async () => {
    const r = await run(bin, ['--help'], work, 60_000);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^ {2}run \[options\] \[dataset\]/m);
    expect(r.stdout).toMatch(/^ {2}setup \[options\]/m);
  });

  it('berth setup runs the machine setup from the package (on this ready machine it changes nothing)', async () => {
    // The Temporal CLI this machine's setup found, so this home's setup does not install one of its own.
    const cliPath = join(homedir(), '.berth', 'temporal-cli-path');
    const cli: Record<string, string> = existsSync(cliPath) ? { TEMPORAL_CLI: readFileSync(cliPath, 'utf8').trim() } : {};
    const r = await run(bin, ['setup'], work, 600_000, cli);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stdout.split('\n').find((l) => l.startsWith('setup: npm'))).toContain(` installed package at ${installed} (`);
    expect(r.stdout).toMatch(/^setup: ready in/m);
  });

  it('berth run hello --agent oracle scores 1, on a worker the installed berth started from the package', async () => {
    const r = await run(bin, ['run', 'hello', '--agent', 'oracle', '--json', '--results', join(work, 'results')], project, 600_000);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout).rows).toMatchObject([{ task_id: 'hello', reward: 1, mask_sample: false }]);
    // The detached worker runs the package's own bin (and so its compiled workflows), not a checkout's.
    const pid = readFileSync(join(env.BERTH_HOME, 'worker.pid'), 'utf8').trim();
    const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    expect(argv).toContain(join(installed, 'bin', 'berth.mjs'));
  });

  it('the client library imports as `berth` and runs a batch', async () => {
    // A user's project that depends on the installed package (as `npm link berth` makes it).
    const client = join(work, 'client');
    mkdirSync(join(client, 'node_modules'), { recursive: true });
    symlinkSync(installed, join(client, 'node_modules', 'berth'));
    writeFileSync(join(client, 'package.json'), '{ "type": "module" }\n');
    writeFileSync(join(client, 'start.js'), [
      "import { startBatch } from 'berth';",
      `const batch = await startBatch({ dataset: ${JSON.stringify(project)}, agent: 'oracle', resultsDir: ${JSON.stringify(join(work, 'client-results'))} });`,
      'const summary = await batch.wait();',
      'await batch.close();',
      'console.log(JSON.stringify(summary.rows.map((r) => [r.task_id, r.reward])));',
    ].join('\n'));
    const r = await run(process.execPath, ['start.js'], client, 600_000);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout.trim().split('\n').at(-1)!)).toEqual([['hello', 1]]);
  });
});
