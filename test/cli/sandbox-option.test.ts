import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { temporalAddress } from '../../src/config/temporal.ts';
import { berth } from '../helpers/cli.ts';

// `--sandbox` on `berth run`, `berth prepare` and `berth worker` (issue 23, "Selecting it"; docs/kubernetes.md, running a batch): the
// run goes to the shared queue of that sandbox's workers, and refuses, naming the command, when none polls it.

const env = () => ({ TEMPORAL_ADDRESS: temporalAddress().address, BERTH_TASK_QUEUE: `test-sandbox-opt-${randomBytes(3).toString('hex')}` });

describe('--sandbox', () => {
  it('`berth run` refuses a sandbox that does not exist, listing the choices; exit 2', async () => {
    const r = await berth(['run', 'examples/hello', '--sandbox', 'podman']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("option '--sandbox <name>' argument 'podman' is invalid. Allowed choices are docker, kubernetes.");
  });

  it('`berth run --sandbox kubernetes` looks for a Kubernetes worker on its own queue and names how to start one', async () => {
    const e = env();
    const r = await berth(['run', 'examples/hello', '--sandbox', 'kubernetes'], e);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain(`No Berth worker polls task queue "${e.BERTH_TASK_QUEUE}-kubernetes"`);
    expect(r.stderr).toContain('Start one with: npx berth worker --sandbox kubernetes');
  });

  it('`berth prepare --sandbox kubernetes` goes to the same queue', async () => {
    const e = env();
    const r = await berth(['prepare', 'examples/hello', '--sandbox', 'kubernetes'], e);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain(`No Berth worker polls task queue "${e.BERTH_TASK_QUEUE}-kubernetes"`);
  });

  it('`berth worker --sandbox kubernetes` without [kubernetes].registry refuses, naming the file and the key', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'berth-sandbox-opt-')), 'berth.toml');
    writeFileSync(file, '[worker]\nslots = 2\n');
    const r = await berth(['worker', '--sandbox', 'kubernetes'], { ...env(), BERTH_CONFIG: file }, 60_000);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain(`${file}: key kubernetes.registry: the kubernetes sandbox (--sandbox kubernetes) needs the registry`);
  });
});
