// `berth report BATCH [--results DIR] [--out FILE] [--json]`: one self-contained HTML page from a
// results folder (rollouts.jsonl, metrics.json, skipped.json). Needs no Temporal; asks it only for
// the batch's dataset and agent labels, briefly, and goes on without them.
import type { Command } from 'commander';
import { existsSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { writeReport } from '../client/report-folder.ts';
import { labelsFromTemporal } from '../client/report-labels.ts';
import { UserError, printJson } from './output.ts';

interface ReportCliOptions { results?: string; out?: string; json?: boolean }

export async function reportCommand(batchId: string, o: ReportCliOptions): Promise<string> {
  const dir = resolve(o.results ?? join('results', batchId));
  const collect = `Run \`npx berth results ${batchId}\` to collect its rows, or pass --results DIR`;
  if (!existsSync(dir) || !statSync(dir).isDirectory()) {
    throw new UserError(`No results folder for batch ${batchId} at ${dir}. ${collect}.`);
  }
  if (!existsSync(join(dir, 'rollouts.jsonl'))) {
    throw new UserError(`${dir} has no rollouts.jsonl: the rows of batch ${batchId} were not collected. ${collect}.`);
  }
  const labels = await labelsFromTemporal(batchId);
  return writeReport({
    batchId, resultsDir: dir, out: o.out, dataset: labels.dataset, agent: labels.agent,
    generatedAt: new Date().toISOString(),
  });
}

export function registerReport(program: Command): void {
  program.command('report').description('write a self-contained HTML report of a batch from its results folder')
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
