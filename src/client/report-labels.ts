// The report header's dataset and agent: rows do not carry them, the batch workflow does.
import { Client, Connection } from '@temporalio/client';
import { serverSettings, temporalAddress } from '../config/temporal.ts';
import { BERTH_AGENT, BERTH_DATASET } from '../config/search-attributes.ts';
import { batchWorkflowId } from './episodes.ts';

export interface BatchLabels { dataset?: string; agent?: string }

/** newBatchId makes `<dataset folder>-<YYYYMMDD>-<HHMMSS>-<hex4>`. */
export function labelsFromBatchId(batchId: string): BatchLabels {
  const m = /^(.+)-\d{8}-\d{6}-[0-9a-f]{4}$/.exec(batchId);
  return m ? { dataset: m[1] } : {};
}

/**
 * The batch workflow's BerthDataset and BerthAgent, when Temporal answers within `timeoutMs`;
 * otherwise nothing (a report must work offline and after retention dropped the workflow).
 */
export async function labelsFromTemporal(batchId: string, timeoutMs = 3000): Promise<BatchLabels> {
  let connection: Connection | undefined;
  const timeout = new Promise<BatchLabels>((r) => setTimeout(() => r({}), timeoutMs).unref());
  const lookup = async (): Promise<BatchLabels> => {
    connection = await Connection.connect({ address: temporalAddress().address, connectTimeout: timeoutMs });
    const client = new Client({ connection, namespace: serverSettings().namespace });
    const d = await client.workflow.getHandle(batchWorkflowId(batchId)).describe();
    const dataset = d.typedSearchAttributes.get(BERTH_DATASET);
    const agent = d.typedSearchAttributes.get(BERTH_AGENT);
    return { ...(dataset ? { dataset } : {}), ...(agent ? { agent } : {}) };
  };
  try {
    return await Promise.race([lookup().catch(() => ({})), timeout]);
  } finally {
    await connection?.close().catch(() => {});
  }
}
