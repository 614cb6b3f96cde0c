import type { Command } from 'commander';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { projectRoot } from '../server/code-hash.ts';

/**
 * `berth setup`: scripts/setup.sh from wherever Berth is, a checkout or an installed package (which ships the
 * script). An installed package has its dependencies already; the script skips its npm step there.
 */
export function registerSetup(program: Command): void {
  program.command('setup').description('set up this machine for Berth: the Docker engine, the base image, Docker Compose v2, the Temporal CLI')
    .option('--tests', 'also what only Berth\'s own tests use (docker-compose, chromium, Harbor)')
    .action((o: { tests?: boolean }) => {
      const r = spawnSync('bash', [join(projectRoot, 'scripts', 'setup.sh'), ...(o.tests ? ['--tests'] : [])], { stdio: 'inherit' });
      process.exitCode = r.status ?? 1;
    });
}
