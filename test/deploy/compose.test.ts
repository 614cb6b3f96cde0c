import { describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '../helpers/cli.ts';

// Images cannot be pulled here, so the file is checked by Debian's docker-compose, not run.
describe('docker-compose.yaml (docs/design.md section 5, deployment beyond one machine)', () => {
  const config = execFileSync('docker-compose', ['-f', join(repoRoot, 'docker-compose.yaml'), 'config'], { encoding: 'utf8' });

  it('defines Temporal on PostgreSQL, the UI and a Berth worker', () => {
    for (const service of ['postgresql:', 'temporal:', 'temporal-ui:', 'worker:']) expect(config).toContain(`  ${service}`);
    expect(config).toMatch(/DB: postgres12/);
    expect(config).toMatch(/TEMPORAL_ADDRESS: temporal:7233/);
  });

  it('mounts the Docker socket into the worker, built from the repo with a Node 20 default base', () => {
    expect(config).toContain('/var/run/docker.sock:/var/run/docker.sock');
    expect(config).toMatch(/NODE_IMAGE: node:20-bookworm-slim/);
    const dockerfile = readFileSync(join(repoRoot, 'Dockerfile'), 'utf8');
    expect(dockerfile).toMatch(/^ARG NODE_IMAGE=node:20/m);
    expect(dockerfile).toMatch(/^FROM \$\{NODE_IMAGE\}/m);
  });
});
