import { Connection } from '@temporalio/client';
import { msToTs } from '@temporalio/common/lib/time.js';
import { RETENTION_DAYS } from '../config/temporal.ts';
import { SEARCH_ATTRIBUTE_TYPES } from '../config/search-attributes.ts';

const TYPE_CODES = { Keyword: 2, Int: 3, Double: 4 } as const;
const GRPC_NOT_FOUND = 5;
const GRPC_ALREADY_EXISTS = 6;
const DAY_SECONDS = 86_400;

/** What Berth changed on a cluster it did not start. */
export interface ClusterPreparation {
  namespaceRegistered: boolean;
  /** The retention Berth raised the namespace to, in days (unset: it was already long enough). */
  retentionDays?: number;
  /** The search attributes Berth registered. */
  added: string[];
}

/** One search attribute the server would not register, and the server's own reason. */
export interface Refusal { name: string; type: string; reason: string }

/** Berth's attributes the namespace lacks, as [name, type]. */
export function missingAttributes(existing: Record<string, unknown>): [string, keyof typeof TYPE_CODES][] {
  return Object.entries(SEARCH_ATTRIBUTE_TYPES).filter(([name]) => !(name in existing));
}

/** The error a worker stops with when the cluster refuses some of Berth's search attributes. */
export function refusalMessage(address: string, namespace: string, refusals: Refusal[]): string {
  const lines = refusals.map((r) => `  ${r.name} (${r.type}): ${r.reason}`);
  return [
    `Temporal at ${address} refused ${refusals.length === 1 ? 'one of Berth\'s search attributes' : `${refusals.length} of Berth's search attributes`} in namespace ${namespace}:`,
    ...lines,
    'Berth\'s workflows set every one of them, so they cannot run in this namespace. Free a slot of that type',
    `(temporal operator search-attribute remove --namespace ${namespace} --name <unused>) or point Berth at another`,
    'namespace (TEMPORAL_NAMESPACE); docs/deployment.md, "Search attributes", lists what Berth needs.',
  ].join('\n');
}

/**
 * Makes a cluster Berth did not start ready for it: registers the namespace if it is missing (with Berth's retention),
 * raises a shorter retention to Berth's, and registers whichever of Berth's search attributes are missing. Throws,
 * naming each attribute and the server's reason, when the store has no room for some (SQL visibility has a fixed
 * number of columns per type).
 */
export async function prepareCluster(address: string, namespace = 'default'): Promise<ClusterPreparation> {
  const connection = await Connection.connect({ address });
  try {
    const result: ClusterPreparation = { namespaceRegistered: false, added: [] };
    const retentionSec = RETENTION_DAYS * DAY_SECONDS;
    const retention = msToTs(retentionSec * 1000);
    const described = await connection.workflowService.describeNamespace({ namespace }).catch((err: unknown) => {
      if ((err as { code?: number }).code === GRPC_NOT_FOUND) return undefined;
      throw err;
    });
    if (!described) {
      await connection.workflowService.registerNamespace({ namespace, workflowExecutionRetentionPeriod: retention }).catch((err: unknown) => {
        if ((err as { code?: number }).code !== GRPC_ALREADY_EXISTS) throw err;
      });
      result.namespaceRegistered = true;
    } else if (Number(described.config?.workflowExecutionRetentionTtl?.seconds ?? 0) < retentionSec) {
      await connection.workflowService.updateNamespace({ namespace, config: { workflowExecutionRetentionTtl: retention } });
      result.retentionDays = RETENTION_DAYS;
    }
    const existing = await waitForNamespace(connection, namespace);
    const missing = missingAttributes(existing);
    if (missing.length === 0) return result;
    const all = await connection.operatorService.addSearchAttributes({
      namespace, searchAttributes: Object.fromEntries(missing.map(([name, type]) => [name, TYPE_CODES[type]])),
    }).then(() => true, () => false);
    if (all) return { ...result, added: missing.map(([name]) => name) };
    // One at a time, so the error names exactly the ones the store has no room for, with the server's reason.
    const refusals: Refusal[] = [];
    for (const [name, type] of missing) {
      await connection.operatorService.addSearchAttributes({ namespace, searchAttributes: { [name]: TYPE_CODES[type] } }).then(
        () => result.added.push(name),
        (err: unknown) => refusals.push({ name, type, reason: (err as Error).message.replace(/^\d+ [A-Z_]+: /, '') }),
      );
    }
    if (refusals.length > 0) throw new Error(refusalMessage(address, namespace, refusals));
    return result;
  } finally {
    await connection.close();
  }
}

/**
 * The namespace's custom search attributes, once the frontend knows the namespace: a namespace registered a moment
 * ago is unknown to the frontend's namespace cache for up to its refresh interval (10 s by default).
 */
async function waitForNamespace(connection: Connection, namespace: string): Promise<Record<string, unknown>> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    try {
      return (await connection.operatorService.listSearchAttributes({ namespace })).customAttributes ?? {};
    } catch (err) {
      if ((err as { code?: number }).code !== GRPC_NOT_FOUND || Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 500));
    }
  }
}

/** On a cluster Berth did not start, register whichever of Berth's search attributes are missing. */
export async function ensureSearchAttributes(address: string, namespace = 'default'): Promise<string[]> {
  return (await prepareCluster(address, namespace)).added;
}
