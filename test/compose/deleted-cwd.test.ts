import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { composeCwd } from '../../src/sandbox/compose/cli.ts';
import { repoRoot } from '../helpers/cli.ts';

// A worker started from a folder that is later removed (a detached worker outlives the `berth run` that started it)
// still runs Compose: the real compose binary asks for its working directory, and in a deleted one every command
// failed with "getwd: no such file or directory", masking every Compose task the worker ran.

const run = promisify(execFile);

describe('compose in a worker whose working directory is gone', () => {
  it('runs in the project\'s folder, so `config` succeeds where it failed with getwd', async () => {
    const project = mkdtempSync(join(tmpdir(), 'berth-cwd-project-'));
    writeFileSync(join(project, 'docker-compose.yaml'), 'services:\n  main:\n    image: busybox\n');
    const script = join(mkdtempSync(join(tmpdir(), 'berth-cwd-script-')), 'run.mts');
    writeFileSync(script, `
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { projectArgs, runCompose } from ${JSON.stringify(join(repoRoot, 'src', 'sandbox', 'compose', 'cli.ts'))};
const gone = mkdtempSync(join(tmpdir(), 'berth-cwd-gone-'));
process.chdir(gone);
rmSync(gone, { recursive: true });
const r = await runCompose([...projectArgs('p', [${JSON.stringify(join(project, 'docker-compose.yaml'))}], ${JSON.stringify(project)}), 'config', '--quiet'], { env: process.env, timeoutMs: 60000 });
console.log(JSON.stringify(r));
`);
    const { stdout } = await run(process.execPath, ['--import', 'tsx', script], { cwd: repoRoot });
    expect(JSON.parse(stdout)).toMatchObject({ code: 0, stderr: '' });
  });

  it.each([
    [['--project-name', 'p', '--project-directory', '/tasks/t/environment', '-f', '/x/docker-compose.yaml', 'up'], '/tasks/t/environment'],
    [['--project-name', 'p', '-f', '/tasks/t/environment/docker-compose.yaml', 'ps'], '/tasks/t/environment'],
    [['--project-name', 'p', '-f', 'relative.yaml', 'ps'], undefined],
    [['version'], undefined],
  ])('%j runs in %s', (args, want) => {
    expect(composeCwd(args)).toBe(want);
  });
});
