import { beforeAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { repoRoot } from '../helpers/cli.ts';
import { ensureServer } from '../../src/server/devserver.ts';
import { ensureWorker } from '../../src/server/worker-daemon.ts';

describe('examples/start-batch.ts (the client script in the README)', () => {
  // As the README says: the script needs a running server and worker (`npx berth server start`).
  beforeAll(async () => { await ensureWorker((await ensureServer()).address); });

  it('runs a batch over examples/ on the embedded server and prints its mean reward', () => {
    const r = spawnSync(process.execPath, ['--import', 'tsx', join(repoRoot, 'examples', 'start-batch.ts')], { cwd: repoRoot, encoding: 'utf8', timeout: 180_000 });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^batch examples-\S+: http:\/\/localhost:8233\//m);
    expect(r.stdout).toMatch(/^ {2}hello #1: 1$/m);
    // examples/ holds hello and compose-hello (a two-service Compose task).
    expect(r.stdout).toMatch(/^ {2}compose-hello #1: 1$/m);
    // ... and examples/arithmetic, a parameterized template rendered into add, multiply and subtract.
    for (const id of ['add', 'multiply', 'subtract']) expect(r.stdout).toMatch(new RegExp(`^ {2}${id} #1: 1$`, 'm'));
    expect(r.stdout).toMatch(/^mean reward 1 over 5 scored episodes \(0 masked\)$/m);
  });
});
