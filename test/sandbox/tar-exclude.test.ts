// An artifact's `exclude` (Harbor 0.25, ArtifactConfig: "tar --exclude") is applied on the host to the
// archive the engine sends, so a service needs no tar of its own (issue 22). Each row asks GNU tar which members
// `tar -cf - --exclude=P -- <base>` keeps and compares isExcluded's verdict.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isExcluded } from '../../src/sandbox/files.ts';

const TREE = ['data/out.txt', 'data/keep.md', 'data/logs/a.log', 'data/logs/b.txt', 'data/sub/dir/deep.log', 'data/sub/x.tmp', 'data/cache/.hidden', 'data/a[1].txt'];
const root = mkdtempSync(join(tmpdir(), 'berth-tar-exclude-'));
for (const f of TREE) {
  mkdirSync(dirname(join(root, f)), { recursive: true });
  writeFileSync(join(root, f), f);
}

function tarKeeps(patterns: string[]): string[] {
  const archive = execFileSync('tar', ['-C', root, '-cf', '-', ...patterns.map((p) => `--exclude=${p}`), '--', 'data']);
  return execFileSync('tar', ['-tf', '-'], { input: archive, encoding: 'utf8' }).split('\n').filter(Boolean).map((n) => n.replace(/\/$/, '')).sort();
}

const every = execFileSync('tar', ['-tf', '-'], { input: execFileSync('tar', ['-C', root, '-cf', '-', '--', 'data']), encoding: 'utf8' })
  .split('\n').filter(Boolean).map((n) => n.replace(/\/$/, ''));

describe('exclude patterns as GNU tar applies them', () => {
  it.each([
    [['*.log']], [['out.txt']], [['logs']], [['sub/dir']], [['*.txt', '*.tmp']], [['.hidden']], [['data']],
    [['l?gs']], [['*/x.tmp']], [['[ab].log']], [['cache/']], [['a\\[1\\].txt']], [['deep']],
  ])('%j', (patterns) => {
    const ours = every.filter((n) => !isExcluded(n, patterns)).sort();
    expect(ours).toEqual(tarKeeps(patterns));
  });
});
