import { afterAll, describe, expect, it } from 'vitest';
import { Connection } from '@temporalio/client';
import { msToTs } from '@temporalio/common/lib/time.js';
import { randomBytes } from 'node:crypto';
import { RETENTION_DAYS } from '../../src/config/temporal.ts';
import { SEARCH_ATTRIBUTE_TYPES } from '../../src/config/search-attributes.ts';
import { prepareCluster } from '../../src/server/search-attributes.ts';
import { CLUSTER } from '../helpers/temporal-server.ts';

// The Temporal cluster of scripts/setup-temporal-cluster.sh: SQL visibility on PostgreSQL, whose schema has a fixed
// number of columns per search attribute type (10 Keyword, 3 Int, 3 Double, ...), not the dev server's SQLite.
describe('Berth on a Temporal cluster it did not start (SQL visibility on PostgreSQL)', () => {
  let connection: Connection | undefined;
  afterAll(async () => { await connection?.close(); });
  const fresh = () => `berth-test-${randomBytes(3).toString('hex')}`;

  it('registers a missing namespace with Berth\'s retention and every search attribute, once', async () => {
    connection = await Connection.connect({ address: CLUSTER.address });
    const namespace = fresh();
    const first = await prepareCluster(CLUSTER.address, namespace);
    expect(first).toEqual({ namespaceRegistered: true, added: Object.keys(SEARCH_ATTRIBUTE_TYPES) });
    expect(await prepareCluster(CLUSTER.address, namespace)).toEqual({ namespaceRegistered: false, added: [] });
    const ns = await connection.workflowService.describeNamespace({ namespace });
    expect(Number(ns.config?.workflowExecutionRetentionTtl?.seconds)).toBe(RETENTION_DAYS * 86_400);
    const sa = await connection.operatorService.listSearchAttributes({ namespace });
    // Types as the server reports them (2 Keyword, 3 Int, 4 Double).
    const codes = { Keyword: 2, Int: 3, Double: 4 };
    for (const [name, type] of Object.entries(SEARCH_ATTRIBUTE_TYPES)) expect(sa.customAttributes?.[name], name).toBe(codes[type]);
  }, 120_000);

  it('raises a shorter retention to Berth\'s', async () => {
    connection ??= await Connection.connect({ address: CLUSTER.address });
    const namespace = fresh();
    await connection.workflowService.registerNamespace({ namespace, workflowExecutionRetentionPeriod: msToTs('1 day') });
    const done = await prepareCluster(CLUSTER.address, namespace);
    expect(done).toMatchObject({ namespaceRegistered: false, retentionDays: RETENTION_DAYS });
    const ns = await connection.workflowService.describeNamespace({ namespace });
    expect(Number(ns.config?.workflowExecutionRetentionTtl?.seconds)).toBe(RETENTION_DAYS * 86_400);
  }, 120_000);

  it('names the one attribute PostgreSQL visibility has no column left for, with the server\'s reason, and registers the rest', async () => {
    connection ??= await Connection.connect({ address: CLUSTER.address });
    const namespace = fresh();
    await prepareCluster(CLUSTER.address, namespace);
    // Two of Berth's attributes gone, and another team's three Double attributes taking every Double column.
    await connection.operatorService.removeSearchAttributes({ namespace, searchAttributes: ['BerthReward', 'BerthBatch'] });
    await connection.operatorService.addSearchAttributes({ namespace, searchAttributes: { TeamCost: 4, TeamScore: 4, TeamLatency: 4 } });
    const error = await prepareCluster(CLUSTER.address, namespace).then(() => undefined, (err: unknown) => err as Error);
    expect(error?.message).toContain(`Temporal at ${CLUSTER.address} refused one of Berth's search attributes in namespace ${namespace}:`);
    expect(error?.message).toMatch(/ {2}BerthReward \(Double\): .*Double/);
    expect(error?.message).not.toMatch(/BerthBatch \(/);
    expect(error?.message).toContain('docs/deployment.md');
    // The Keyword one still had room: registered.
    const sa = await connection.operatorService.listSearchAttributes({ namespace });
    expect(sa.customAttributes).toHaveProperty('BerthBatch');
  }, 120_000);
});
