// Where scripts/setup-temporal-cluster.sh puts the Temporal cluster, and the environment that points a test process
// at it. No imports: vitest.config.ts reads it.

export const CLUSTER = { address: '127.0.0.1:7333', uiUrl: 'http://127.0.0.1:8333' } as const;

/** What the `cluster` projects set for their test processes (TEMPORAL_ADDRESS is what src/config reads). */
export const CLUSTER_TIER_ENV = { BERTH_TEST_TEMPORAL: 'cluster', TEMPORAL_ADDRESS: CLUSTER.address, BERTH_UI_URL: CLUSTER.uiUrl } as const;
