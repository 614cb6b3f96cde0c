import { configDefaults, defineConfig } from 'vitest/config';
import { CLUSTER_TIER_ENV } from './test/helpers/temporal-server-env.ts';
import { corpusProblem } from './test/helpers/corpus.ts';

// Said once, before any test: otherwise each test that reads a real task folder fails alone with ENOENT.
const noCorpus = corpusProblem();
if (noCorpus) throw new Error(noCorpus);

/**
 * Two tiers, chosen by file name so the choice cannot drift from a list:
 * - `unit`: `*.unit.test.ts`, tests that need neither a container engine nor Temporal (`npm run test:unit`).
 *   They run against a dead engine socket and a dead Temporal port, in `npm test` too, so a unit test that
 *   starts touching either fails loudly (ENOENT on the socket, "No Temporal server answers") instead of
 *   quietly slowing the fast tier down.
 * - `engine`: every other `*.test.ts`, with the real Docker engine and the shared dev server (global setup).
 * - `solo`: the engine tests in SOLO, run after the others with the machine to themselves, one file at a time. They
 *   kill engines mid-batch and time what follows; beside 48 concurrent Compose groups on two cores they timed out.
 * - `cluster`: the suites that make sense on a Temporal cluster (ON_CLUSTER) run again, against the cluster of
 *   scripts/setup-temporal-cluster.sh instead of the dev server (test/helpers/temporal-server.ts chooses), with the
 *   cluster's own checks (`cluster-*.test.ts`, cluster only); then `cluster-chaos`, the file that kills the cluster's
 *   services mid-batch, alone.
 * `npm test` runs every project, each file once: `unit` first, in the gate with tsc and ESLint (scripts/test.sh), and
 * the others only once the gate passed.
 */
const UNIT = 'test/**/*.unit.test.ts';
const SOLO = ['test/chaos/engines.test.ts'];
const CLUSTER_ONLY = 'test/**/cluster-*.test.ts';
const CLUSTER_CHAOS = 'test/chaos/cluster-*.test.ts';
const ON_CLUSTER = [
  'test/e2e/hello.test.ts', 'test/e2e/multistep.test.ts', 'test/e2e/cancel.test.ts', 'test/e2e/retry.test.ts',
  'test/e2e/batch-control.test.ts', 'test/e2e/regrade.test.ts', 'test/chaos/worker-crash.test.ts', 'test/chaos/reset.test.ts',
];

/** Where a unit test finds no engine and no Temporal (read by dockerode, src/config/temporal.ts and the helpers). */
export const UNIT_TIER_ENV = {
  DOCKER_HOST: 'unix:///nonexistent/berth-unit-tier-has-no-engine.sock',
  TEMPORAL_ADDRESS: '127.0.0.1:9',
  BERTH_TEST_NO_SERVER: '1',
  BERTH_UNIT_TIER: '1',
};

export default defineConfig({
  test: {
    // The Temporal core runtime is a per-process singleton: one process per test file.
    pool: 'forks',
    poolOptions: { forks: { maxForks: 2, minForks: 1 } },
    testTimeout: 120_000,
    hookTimeout: 180_000,
    env: { BERTH_JANITOR_AT_START: '0' },
    reporters: ['default'],
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: [UNIT],
          env: { BERTH_JANITOR_AT_START: '0', ...UNIT_TIER_ENV },
        },
      },
      {
        extends: true,
        test: {
          name: 'engine',
          include: ['test/**/*.test.ts'],
          exclude: [...configDefaults.exclude, UNIT, ...SOLO, CLUSTER_ONLY],
          globalSetup: ['test/global-setup.ts'],
        },
      },
      // One project per file, each its own group: vitest runs groups one after another.
      ...SOLO.map((file, i) => ({
        extends: true as const,
        test: {
          name: SOLO.length === 1 ? 'solo' : `solo-${i + 1}`,
          include: [file],
          globalSetup: ['test/global-setup.ts'],
          sequence: { groupOrder: i + 1 },
        },
      })),
      {
        extends: true,
        test: {
          name: 'cluster',
          include: [...ON_CLUSTER, CLUSTER_ONLY],
          exclude: [...configDefaults.exclude, UNIT, CLUSTER_CHAOS],
          globalSetup: ['test/global-setup-cluster.ts'],
          env: { BERTH_JANITOR_AT_START: '0', ...CLUSTER_TIER_ENV },
          sequence: { groupOrder: SOLO.length + 1 },
        },
      },
      {
        extends: true,
        test: {
          name: 'cluster-chaos',
          include: [CLUSTER_CHAOS],
          globalSetup: ['test/global-setup-cluster.ts'],
          env: { BERTH_JANITOR_AT_START: '0', ...CLUSTER_TIER_ENV },
          sequence: { groupOrder: SOLO.length + 2 },
        },
      },
    ],
  },
});
