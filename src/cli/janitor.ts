// `berth janitor [--json]`: removes sandboxes whose episode workflow is no longer running.
import { Client, Connection, WorkflowNotFoundError } from '@temporalio/client';
import type { Command } from 'commander';
import { serverSettings, temporalAddress } from '../config/index.ts';
import { DockerSandboxProvider } from '../sandbox/index.ts';
import type { JanitorReport } from '../sandbox/types.ts';
import { printJson, UserError } from './output.ts';


/** isLive backed by Temporal: live means the workflow's latest run is RUNNING. */
export function temporalLiveness(client: Client): (workflowId: string) => Promise<boolean> {
  return async (workflowId) => {
    try {
      const d = await client.workflow.getHandle(workflowId).describe();
      return d.status.name === 'RUNNING';
    } catch (err) {
      if (err instanceof WorkflowNotFoundError) return false;
      throw err;
    }
  };
}

export async function runJanitorCommand(opts: { json?: boolean }): Promise<JanitorReport> {
  const { address } = temporalAddress();
  let connection: Connection;
  try {
    connection = await Connection.connect({ address, connectTimeout: '5s' });
  } catch (err) {
    throw new UserError(
      `Temporal at ${address} is not reachable (${(err as Error).message}), so no container was removed: ` +
        `without it Berth cannot tell finished episodes from running ones. Start it with \`berth server start\` ` +
        `or set TEMPORAL_ADDRESS, then run \`berth janitor\` again.`,
    );
  }
  try {
    const client = new Client({ connection, namespace: serverSettings().namespace });
    const report = await new DockerSandboxProvider().janitor({ isLive: temporalLiveness(client) });
    if (opts.json) {
      printJson(report);
    } else {
      for (const r of report.removed) console.log(`removed ${r.name} (${r.workflowId})`);
      for (const k of report.kept) console.log(`kept    ${k.name} (${k.workflowId}): ${k.reason}`);
      console.log(`${report.removed.length} removed, ${report.kept.length} kept`);
    }
    return report;
  } finally {
    await connection.close();
  }
}

export function registerJanitor(program: Command): void {
  program
    .command('janitor')
    .description('Remove sandbox containers whose episode is no longer running (asks Temporal)')
    .option('--json', 'print the report as JSON')
    .action(async (opts: { json?: boolean }) => {
      await runJanitorCommand(opts);
    });
}
