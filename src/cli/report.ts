// `berth report BATCH|JOB_DIR [--results DIR] [--out FILE] [--json]`: a self-contained HTML file set from a results
// folder (rollouts.jsonl, metrics.json, skipped.json, and each row's logs folder or trial folder), or from a Harbor job
// directory that Harbor wrote: the batch page and a page per episode.
// `berth view BATCH` serves the same pages on localhost. Neither needs Temporal; they ask it only for the batch's
// dataset and agent labels, briefly, and go on without them.
import type { Command } from 'commander';
import { existsSync, statSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { writeReport } from '../client/report-folder.ts';
import { isHarborJobDir } from '../client/harbor-job/reader.ts';
import { labelsFromTemporal } from '../client/report-labels.ts';
import { serveReport, type ReportServer } from '../client/report-server.ts';
import { resultsFromStore } from '../client/store-results.ts';
import { positiveInt } from './options.ts';
import { UserError, printJson } from './output.ts';

interface ReportCliOptions { results?: string; out?: string; json?: boolean }

/**
 * The folder a report reads, checked: a batch's results folder holding collected rows, or a path to any Harbor job
 * directory (Harbor's own too). Answers the folder and the name the report gives it.
 */
export function resultsFolderOf(batchOrDir: string, results: string | undefined): { dir: string; name: string; harborOnly: boolean } {
  const asPath = !results && existsSync(batchOrDir) && statSync(batchOrDir).isDirectory();
  const dir = resolve(results ?? (asPath ? batchOrDir : join('results', batchOrDir)));
  const name = asPath ? basename(dir) : batchOrDir;
  const collect = `Run \`npx berth results ${name}\` to collect its rows, or pass --results DIR (or the path of a Harbor job directory)`;
  if (!existsSync(dir) || !statSync(dir).isDirectory()) {
    throw new UserError(`No results folder for batch ${name} at ${dir}. ${collect}.`);
  }
  const harborOnly = !existsSync(join(dir, 'rollouts.jsonl')) && isHarborJobDir(dir);
  if (!existsSync(join(dir, 'rollouts.jsonl')) && !harborOnly) {
    throw new UserError(`${dir} has no rollouts.jsonl (nor a Harbor job's config.json and result.json): the rows of ${name} were not collected. ${collect}.`);
  }
  return { dir, name, harborOnly };
}

/**
 * A batch named by id whose results folder is not on this machine: made from the results store when berth.toml sets
 * one (the job's files and each row's trial), so view and report need neither the hosts nor `berth results` here.
 */
async function fromStoreIfMissing(batchOrDir: string, results: string | undefined): Promise<void> {
  if (!results && existsSync(batchOrDir)) return;
  const dir = resolve(results ?? join('results', batchOrDir));
  if (existsSync(join(dir, 'rollouts.jsonl'))) return;
  await resultsFromStore(batchOrDir, dir);
}

/** Dataset and agent: a Harbor job's own config says them; a Berth batch asks Temporal briefly. */
const labelsOf = async (f: { name: string; harborOnly: boolean }): Promise<{ dataset?: string; agent?: string }> => (f.harborOnly ? {} : labelsFromTemporal(f.name));

export async function reportCommand(batchOrDir: string, o: ReportCliOptions): Promise<string> {
  await fromStoreIfMissing(batchOrDir, o.results);
  const f = resultsFolderOf(batchOrDir, o.results);
  const labels = await labelsOf(f);
  return writeReport({
    batchId: f.name, resultsDir: f.dir, out: o.out, dataset: labels.dataset, agent: labels.agent,
    generatedAt: new Date().toISOString(),
  });
}

/** `berth view BATCH`: the same pages on localhost until interrupted. */
export async function viewCommand(batchOrDir: string, o: { results?: string; port?: number }): Promise<ReportServer> {
  await fromStoreIfMissing(batchOrDir, o.results);
  const f = resultsFolderOf(batchOrDir, o.results);
  const labels = await labelsOf(f);
  return serveReport({ batchId: f.name, resultsDir: f.dir, dataset: labels.dataset, agent: labels.agent, port: o.port });
}

export function registerReport(program: Command): void {
  program.command('view').description('serve the report of a batch, with a page per episode, on localhost')
    .argument('<batch>', 'batch id, or the path of a job directory (a Berth batch\'s results folder, or one Harbor wrote)')
    .option('--results <dir>', 'results folder (default results/<batch>)')
    .option('--port <n>', 'port on 127.0.0.1 (default: any free one)', positiveInt('--port'))
    .action(async (batchId: string, o: { results?: string; port?: number }) => {
      const served = await viewCommand(batchId, o);
      console.log(`${served.url}\n(Ctrl-C to stop)`);
      await new Promise<void>((resolve) => process.once('SIGINT', () => { void served.close().then(resolve); }));
    });
  program.command('report').description('write a self-contained HTML report of a batch (a page per episode) from its results folder')
    .argument('<batch>', 'batch id, or the path of a job directory (a Berth batch\'s results folder, or one Harbor wrote)')
    .option('--results <dir>', 'results folder (default results/<batch>)')
    .option('--out <file>', 'where to write the page (default <results>/report.html)')
    .option('--json', 'print JSON')
    .action(async (batchId: string, o: ReportCliOptions) => {
      const path = await reportCommand(batchId, o);
      if (o.json) printJson({ report: path });
      else console.log(path);
    });
}
