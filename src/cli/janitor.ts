// `berth janitor [--json]`: removes sandboxes whose episode workflow is no longer running.
import { Client, Connection } from '@temporalio/client';
import type { Command } from 'commander';
import { serverSettings, temporalAddress } from '../config/index.ts';
import { removeOrphans, type JanitorReport } from '../worker.ts';
import { printJson, UserError } from './output.ts';

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
    const report = await removeOrphans(new Client({ connection, namespace: serverSettings().namespace }));
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
