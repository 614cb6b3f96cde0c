// `berth regrade BATCH [--task ID [--repeat N]]`: verification again for finished episodes, without the agent.
// `berth gc [--batch B | --all] [--older-than DAYS]`: removes the final-state images --keep-final-state kept.
import type { Command } from 'commander';
import { createInterface } from 'node:readline/promises';
import { removeKeptStates, retentionDays } from '../worker.ts';
import { finalStateRetentionDays } from '../config/index.ts';
import { withHandle } from './batch-commands.ts';
import { collect, positiveInt } from './options.ts';
import { UserError, dim, printJson, yellow } from './output.ts';
import { printSummary } from './run.ts';
import { storedBatch } from '../client/store-gc.ts';

/** The batch's objects in the results store, removed once confirmed (a prompt on a terminal, else --yes). */
async function gcStored(batchId: string, o: { yes?: boolean; json?: boolean }): Promise<{ store: string; removed: number; bytes: number }> {
  const s = await storedBatch(batchId);
  if (!s) throw new UserError(`No results store is set: \`berth gc ${batchId}\` removes a batch's objects from [results] store (docs/configuration.md, [results]); for kept final states alone use --batch ${batchId}`);
  try {
    const where = `s3://${s.store.replace(/^s3:\/\//, '').split('/')[0]}/${s.prefix}`;
    if (s.objects > 0 && !o.yes) {
      if (!process.stdin.isTTY) throw new UserError(`${s.objects} object(s) of ${batchId} (${s.bytes} bytes) under ${where}: pass --yes to remove them`);
      const rl = createInterface({ input: process.stdin, output: process.stdout });
      const answer = await rl.question(`remove ${s.objects} object(s) of ${batchId} (${s.bytes} bytes) under ${where}? [y/N] `);
      rl.close();
      if (!/^y(es)?$/i.test(answer.trim())) throw new UserError(`nothing removed from ${where}`);
    }
    const removed = s.objects > 0 ? await s.remove() : 0;
    if (!o.json) console.log(`removed ${removed} object(s) of ${batchId} from ${where}`);
    return { store: s.store, removed, bytes: s.bytes };
  } finally {
    s.close();
  }
}

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

  program.command('gc').description(`remove kept final states (berth run --keep-final-state): by default those older than ${retentionDays(finalStateRetentionDays())} days; with a batch, also its objects in the results store`)
    .argument('[batch]', "a batch whose objects in the results store ([results] store) go, after you confirm (or --yes); its kept final states go too")
    .option('--batch <id>', "this batch's, whatever their age")
    .option('--all', 'every one on this host')
    .option('--older-than <days>', 'those kept more than this many days ago', positiveInt('--older-than'))
    .option('--yes', 'remove the batch\'s stored objects without asking')
    .option('--json', 'print JSON')
    .action(async (batch: string | undefined, o: { batch?: string; all?: boolean; olderThan?: number; yes?: boolean; json?: boolean }) => {
      if (batch && o.batch && batch !== o.batch) throw new UserError(`Name one batch: ${batch} and --batch ${o.batch} differ`);
      const stored = batch ? await gcStored(batch, o) : undefined;
      const r = await removeKeptStates({ batch: batch ?? o.batch, all: o.all, olderThanDays: o.olderThan });
      if (o.json) return printJson({ ...r, ...(stored ? { stored } : {}) });
      if (o.json) return printJson(r);
      for (const k of r.removed) console.log(`removed ${k.image} (${k.workflowId}, kept ${k.keptAt})`);
      for (const k of r.kept) console.log(yellow(`kept    ${k.image} (${k.workflowId}): ${k.reason}`));
      console.log(dim(`${r.removed.length} removed, ${r.kept.length} left`));
    });
}
