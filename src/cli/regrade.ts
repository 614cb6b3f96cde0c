// `berth regrade BATCH [--task ID [--repeat N]]`: verification again for finished episodes, without the agent.
// `berth gc [--batch B | --all] [--older-than DAYS]`: removes the final-state images --keep-final-state kept.
import type { Command } from 'commander';
import { removeKeptStates, retentionDays } from '../worker.ts';
import { finalStateRetentionDays } from '../config/index.ts';
import { withHandle } from './batch-commands.ts';
import { collect, positiveInt } from './options.ts';
import { UserError, dim, printJson, yellow } from './output.ts';
import { printSummary } from './run.ts';

export function registerRegrade(program: Command): void {
  program.command('regrade').description("run verification again for a batch's finished episodes (the task's tests/ as they are now), without the agent")
    .argument('<batch>', 'batch id')
    .option('--task <id>', 'only episodes of this task (repeatable)', collect)
    .option('--repeat <n>', 'with --task: only this repeat', positiveInt('--repeat'))
    .option('--results <dir>', 'results folder to rewrite (default results/<batch>)')
    .option('--json', 'print JSON')
    .action(async (batchId: string, o: { task?: string[]; repeat?: number; results?: string; json?: boolean }) => {
      if (o.repeat !== undefined && !o.task) throw new UserError('--repeat N picks a repeat of the --task ID episodes: pass --task ID too');
      await withHandle(batchId, o.results, async (h) => {
        const s = await h.regrade({ taskIds: o.task, repeat: o.repeat });
        const regraded = s.started.length - s.failed.length;
        // Nothing regraded is a failed command, whatever the reasons.
        if (regraded === 0) process.exitCode = 1;
        if (o.json) return printJson({ batch_id: batchId, regraded: s.started, skipped: s.skipped, failed: s.failed, metrics: s.metrics, rows: s.rows, results: s.resultsDir });
        for (const k of s.skipped) console.log(yellow(`not regraded ${k.workflowId}: ${k.reason}`));
        for (const f of s.failed) console.log(yellow(`regrade ${f.workflowId} could not run: ${f.reason}`));
        if (s.started.length === 0) {
          console.error(`nothing regraded: ${s.skipped.length ? 'no chosen episode can be regraded (above: why)' : 'no episode of the batch matches'}; no regrade was started`);
          return;
        }
        console.log(`regraded ${regraded} of ${s.started.length + s.skipped.length} episode(s)`);
        printSummary(s.rows, s.metrics.mean_reward, s.uiLink, s.resultsDir);
      });
    });

  program.command('gc').description(`remove kept final states (berth run --keep-final-state): by default those older than ${retentionDays(finalStateRetentionDays())} days`)
    .option('--batch <id>', "this batch's, whatever their age")
    .option('--all', 'every one on this host')
    .option('--older-than <days>', 'those kept more than this many days ago', positiveInt('--older-than'))
    .option('--json', 'print JSON')
    .action(async (o: { batch?: string; all?: boolean; olderThan?: number; json?: boolean }) => {
      const r = await removeKeptStates({ batch: o.batch, all: o.all, olderThanDays: o.olderThan });
      if (o.json) return printJson(r);
      for (const k of r.removed) console.log(`removed ${k.image} (${k.workflowId}, kept ${k.keptAt})`);
      for (const k of r.kept) console.log(yellow(`kept    ${k.image} (${k.workflowId}): ${k.reason}`));
      console.log(dim(`${r.removed.length} removed, ${r.kept.length} left`));
    });
}
