import type { Command } from 'commander';
import { nothingLoaded, startBatch } from '../client/batch.ts';
import { DatasetRefusal } from '../client/datasets.ts';
import { validateExitCode, validationOf, validationPlan, type ValidationPlan, type ValidationRow } from '../client/validate.ts';
import { ensureCluster } from './ensure.ts';
import { keyValue, positiveInt } from './options.ts';
import { UserError, green, printJson, red, table, yellow } from './output.ts';

const paint = (s: ValidationRow['status']) => (s === 'solved' ? green(s) : s === 'unvalidated' ? yellow(s) : red(s));

export function registerValidate(program: Command): void {
  program.command('validate').description('run the oracle over every task: does each reference solution score 1?')
    .argument('<dataset>', 'a folder of task folders')
    .option('--image-alias <from=to>', 'map an image reference to a local one (repeatable)', keyValue('--image-alias'))
    .option('--concurrency <n>', 'episodes running at once', positiveInt('--concurrency'), 4)
    .option('--results <dir>', 'results folder (default results/<batch id>)')
    .option('--json', 'print JSON')
    .action(async (datasetArg: string, o: { imageAlias?: Record<string, string>; concurrency: number; results?: string; json?: boolean }) => {
      let plan: ValidationPlan;
      try {
        plan = await validationPlan(datasetArg, o.imageAlias);
      } catch (err) {
        if (err instanceof DatasetRefusal) throw new UserError(err.message, 2);
        throw err;
      }
      const { refused, runnable } = plan;
      // Task Folder Format § What the loader refuses: when no task loads, the error instead of a table, exit 2.
      if (runnable.length + plan.unvalidated.length === 0) {
        const error = nothingLoaded(datasetArg, refused);
        if (!o.json) throw new UserError(error, 2);
        process.exitCode = 2;
        return printJson({ error, tasks: [], refused });
      }
      const rows: ValidationRow[] = [...plan.unvalidated];
      if (runnable.length > 0) {
        await ensureCluster();
        const handle = await startBatch({
          dataset: datasetArg, agent: 'oracle', imageAliases: o.imageAlias, concurrency: o.concurrency, resultsDir: o.results,
          taskFilter: (id) => runnable.includes(id), logger: { warn: () => undefined },
        });
        try {
          const summary = await handle.wait();
          const byTask = new Map(summary.rows.map((r) => [r.task_id, r]));
          for (const s of handle.skipped) if (s.stage === 'prepare') refused.push(s);
          const prepared = new Set(handle.input?.tasks.map((t) => t.taskId));
          for (const id of runnable) if (prepared.has(id)) rows.push(validationOf(id, byTask.get(id)));
        } finally {
          await handle.close();
        }
      }
      rows.sort((a, b) => a.task_id.localeCompare(b.task_id));
      process.exitCode = validateExitCode(rows, refused.length);
      if (o.json) return printJson({ tasks: rows.map(({ task_id, status, reward, failure_kind }) => ({ task_id, status, reward, failure_kind })), refused });
      console.log(table(['task_id', 'status', 'reward', 'detail'], [
        ...rows.map((r) => [r.task_id, paint(r.status), r.reward === null ? '-' : r.reward.toFixed(3), [r.failure_kind, r.reason?.split('\n')[0]?.slice(0, 90)].filter(Boolean).join(': ')]),
        ...refused.map((r) => [r.task_id, red(`skipped: ${r.reason.split('\n')[0]!.slice(0, 110)}`), '-', '']),
      ]));
    });
}
