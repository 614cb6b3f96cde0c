// `berth report BATCH [--results DIR] [--out FILE] [--json]`: a self-contained HTML file set from a results folder
// (rollouts.jsonl, metrics.json, skipped.json, and each row's logs folder): the batch page and a page per episode.
// `berth view BATCH` serves the same pages on localhost. Neither needs Temporal; they ask it only for the batch's
// dataset and agent labels, briefly, and go on without them.
import type { Command } from 'commander';
import { existsSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { writeReport } from '../client/report-folder.ts';
import { labelsFromTemporal } from '../client/report-labels.ts';
import { serveReport, type ReportServer } from '../client/report-server.ts';
import { positiveInt } from './options.ts';
import { UserError, printJson } from './output.ts';

interface ReportCliOptions { results?: string; out?: string; json?: boolean }

/** The results folder a report reads, checked: it exists and holds collected rows. */
function resultsFolderOf(batchId: string, results: string | undefined): string {
  const dir = resolve(results ?? join('results', batchId));
  const collect = `Run \`npx berth results ${batchId}\` to collect its rows, or pass --results DIR`;
  if (!existsSync(dir) || !statSync(dir).isDirectory()) {
    throw new UserError(`No results folder for batch ${batchId} at ${dir}. ${collect}.`);
  }
  if (!existsSync(join(dir, 'rollouts.jsonl'))) {
    throw new UserError(`${dir} has no rollouts.jsonl: the rows of batch ${batchId} were not collected. ${collect}.`);
  }
  return dir;
}

export async function reportCommand(batchId: string, o: ReportCliOptions): Promise<string> {
  const dir = resultsFolderOf(batchId, o.results);
  const labels = await labelsFromTemporal(batchId);
  return writeReport({
    batchId, resultsDir: dir, out: o.out, dataset: labels.dataset, agent: labels.agent,
    generatedAt: new Date().toISOString(),
  });
}

/** `berth view BATCH`: the same pages on localhost until interrupted. */
export async function viewCommand(batchId: string, o: { results?: string; port?: number }): Promise<ReportServer> {
  const dir = resultsFolderOf(batchId, o.results);
  const labels = await labelsFromTemporal(batchId);
  return serveReport({ batchId, resultsDir: dir, dataset: labels.dataset, agent: labels.agent, port: o.port });
}

export function registerReport(program: Command): void {
  program.command('view').description('serve the report of a batch, with a page per episode, on localhost')
    .argument('<batch>', 'batch id')
    .option('--results <dir>', 'results folder (default results/<batch>)')
    .option('--port <n>', 'port on 127.0.0.1 (default: any free one)', positiveInt('--port'))
    .action(async (batchId: string, o: { results?: string; port?: number }) => {
      const served = await viewCommand(batchId, o);
      console.log(`${served.url}\n(Ctrl-C to stop)`);
      await new Promise<void>((resolve) => process.once('SIGINT', () => { void served.close().then(resolve); }));
    });
  program.command('report').description('write a self-contained HTML report of a batch (a page per episode) from its results folder')
    .argument('<batch>', 'batch id')
    .option('--results <dir>', 'results folder (default results/<batch>)')
    .option('--out <file>', 'where to write the page (default <results>/report.html)')
    .option('--json', 'print JSON')
    .action(async (batchId: string, o: ReportCliOptions) => {
      const path = await reportCommand(batchId, o);
      if (o.json) printJson({ report: path });
      else console.log(path);
    });
}
