import { Client, Connection } from '@temporalio/client';
import { temporalAddress, serverSettings } from '../config/temporal.ts';

export interface Connected { client: Client; connection: Connection; address: string; namespace: string }

export async function connect(address = temporalAddress().address, namespace = serverSettings().namespace): Promise<Connected> {
  let connection: Connection;
  try {
    connection = await Connection.connect({ address, connectTimeout: 5000 });
  } catch (err) {
    throw new Error(`Cannot reach Temporal at ${address}: ${(err as Error).message}. Start the embedded server with \`npx berth server start\`, or set TEMPORAL_ADDRESS to a running cluster.`);
  }
  return { client: new Client({ connection, namespace }), connection, address, namespace };
}
