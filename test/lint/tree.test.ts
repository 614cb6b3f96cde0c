import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { repoRoot } from '../helpers/cli.ts';

const bin = (name: string) => join(repoRoot, 'node_modules', '.bin', name);

describe('the whole tree', () => {
  it('type-checks under strict TypeScript', () => {
    const r = spawnSync(bin('tsc'), ['--noEmit', '-p', repoRoot], { cwd: repoRoot, encoding: 'utf8' });
    expect(r.stdout + r.stderr).toBe('');
    expect(r.status).toBe(0);
  });

  it('lints clean (typescript-eslint, no floating promises, deterministic workflows)', () => {
    // The lint tests plant short-lived probe files in src; they are not part of the tree.
    const r = spawnSync(bin('eslint'), ['src', 'test', 'bench', 'examples', '--ignore-pattern', 'src/**/lint-probe-*'], { cwd: repoRoot, encoding: 'utf8' });
    expect(r.stdout + r.stderr).toBe('');
    expect(r.status).toBe(0);
  });
});
