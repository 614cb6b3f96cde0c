import { Option, type Command } from 'commander';
import { existsSync, statSync } from 'node:fs';
import { startBatch } from '../client/batch.ts';
import { AGENT_NAMES, type AgentName } from '../config/agents.ts';
import type { ResultRow } from '../client/index.ts';
import { usageMetrics } from '../client/usage-stats.ts';
import type { SandboxProviderName } from '../config/berth-config.ts';
import { ensureCluster } from './ensure.ts';
import { sandboxOption, sandboxQueue } from './sandbox-option.ts';
import { liveProgress } from './progress.ts';
import { collect, globToRegExp, keyValue, positiveInt, positiveNumber } from './options.ts';
import { UserError, bold, dim, green, printJson, red, table, yellow } from './output.ts';

interface RunOptions {
  agent: AgentName;
  repeats?: number;
  concurrency: number;
  results?: string;
  jobsDir?: string;
  path?: string;
  imageAlias?: Record<string, string>;
  agentArg?: Record<string, string>;
  task?: string[];
  detach?: boolean;
  json?: boolean;
  strict?: boolean;
  allowUnsupportedPairing?: boolean;
  keepFinalState?: boolean;
  warmPool: boolean;
  model?: string;
  maxTokens?: number;
  maxCost?: number;
  sandbox?: SandboxProviderName;
}

/** Per task: episodes, mean reward over unmasked ones, outcomes; then the totals and where to look. */
export function printSummary(rows: ResultRow[], meanReward: number | null, uiLink: string, resultsDir: string): void {
  const byTask = new Map<string, ResultRow[]>();
  for (const r of rows) byTask.set(r.task_id, [...(byTask.get(r.task_id) ?? []), r]);
  const usage = usageMetrics(rows);
  const lines = [...byTask.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([task, rs]) => {
    const scored = rs.filter((r) => !r.mask_sample);
    const mean = scored.length ? scored.reduce((s, r) => s + (r.reward ?? 0), 0) / scored.length : null;
    const masked = rs.length - scored.length;
    const outcome = [scored.length ? green(`${scored.length} scored`) : '', masked ? yellow(`${masked} masked`) : ''].filter(Boolean).join(', ');
    const kinds = [...new Set(rs.map((r) => r.failure_kind).filter(Boolean))].join(', ');
    const u = usage?.per_task_mean[task];
    const spend = usage ? [u ? String(Math.round(u.promptTokens + u.completionTokens)) : '-', u?.costUsd !== undefined ? `$${u.costUsd.toFixed(4)}` : '-'] : [];
    return [task, rs.length, mean === null ? '-' : mean.toFixed(3), outcome, kinds ? red(kinds) : '', ...spend];
  });
  console.log(table(['task_id', 'episodes', 'reward', 'outcome', 'failure_kind', ...(usage ? ['tokens/ep', 'cost/ep'] : [])], lines));
  const masked = rows.filter((r) => r.mask_sample).length;
  console.log(`\n${bold('total')}       ${rows.length} episodes of ${byTask.size} tasks: ${rows.length - masked} scored, ${masked} masked; mean reward ${meanReward === null ? '-' : meanReward.toFixed(3)}`);
  if (usage) {
    const t = usage.total;
    console.log(`${bold('model')}       ${t.calls} calls, ${t.promptTokens} input tokens (${t.cachedTokens ?? 0} cached), ${t.completionTokens} output${t.costUsd !== undefined ? `, $${t.costUsd.toFixed(4)}` : ''}`);
  }
  console.log(`${bold('results')}     ${resultsDir}`);
  console.log(`${bold('Temporal UI')} ${uiLink}`);
}

/** The dataset: the argument, or Harbor's -p/--path (one of them). */
export function datasetOf(positional: string | undefined, path: string | undefined): string {
  if (positional && path && positional !== path) throw new UserError(`Two datasets: ${positional} and -p ${path}. Pass one.`);
  const dataset = positional ?? path;
  if (!dataset) throw new UserError('Which dataset? Pass a folder of task folders: npx berth run examples/hello (or -p examples/hello)');
  return dataset;
}

export function registerRun(program: Command): void {
  program.command('run').description('run an agent over a dataset, one durable episode per (task, repeat)')
    .argument('[dataset]', 'a folder of task folders (or one task folder); or -p, as Harbor takes it')
    .option('-p, --path <dataset>', 'the dataset, as Harbor\'s -p/--path')
    .addOption(new Option('-a, --agent <name>', 'the agent that runs the episodes').choices(AGENT_NAMES).default('oracle'))
    .option('-m, --model <provider/model>', 'the model an installed agent calls through the worker\'s gateway, e.g. anthropic/claude-sonnet-4-5')
    .option('--max-tokens <n>', 'per episode: end the turn once its model calls pass this many tokens (input + output)', positiveInt('--max-tokens'))
    .option('--max-cost <usd>', 'per episode: end the turn once its model calls cost more (berth.toml [gateway.prices])', positiveNumber('--max-cost'))
    .option('-k, --repeats <n>', 'episodes per task (default: dataset.toml num_repeats, else 1); Harbor\'s -k/--n-attempts', positiveInt('--repeats'))
    .option('-n, --concurrency <n>', 'episodes running at once; Harbor\'s -n/--n-concurrent', positiveInt('--concurrency'), 4)
    .option('--results <dir>', 'results folder (default results/<batch id>)')
    .option('-o, --jobs-dir <dir>', 'the folder the results folder goes in, <dir>/<batch id>, as Harbor\'s -o/--jobs-dir (default results)')
    .option('--image-alias <from=to>', 'map an image reference to a local one (repeatable)', keyValue('--image-alias'))
    .option('--agent-arg <key=value>', 'an argument for the agent (repeatable)', keyValue('--agent-arg'))
    .option('--task <glob>', 'only tasks whose id matches (repeatable)', collect)
    .option('--detach', 'start the batch, print its id, and return')
    .option('--json', 'print JSON')
    .option('--strict', 'stop when any task is refused')
    .option('--allow-unsupported-pairing', 'run an agent outside [gym] allowed_agents')
    .option('--keep-final-state', 'keep each shared-mode sandbox as an image after its last agent turn, for berth regrade (removed by berth gc)')
    .addOption(sandboxOption('the sandbox the episodes run in: the batch goes to the workers of that sandbox (default: berth.toml [sandbox] provider, else docker)'))
    .option('--no-warm-pool', 'seed every episode fresh: no host seeds sandboxes ahead for this batch (docs/performance.md)')
    .action(async (positional: string | undefined, o: RunOptions) => {
      const dataset = datasetOf(positional, o.path);
      if (o.results && o.jobsDir) throw new UserError('Pass --results DIR (the batch\'s own folder) or -o/--jobs-dir DIR (the folder it goes in), not both');
      if (!existsSync(dataset) || !statSync(dataset).isDirectory()) {
        throw new UserError(`Dataset ${dataset} does not exist or is not a folder. Pass a folder of task folders, e.g. npx berth run examples/hello`);
      }
      const taskQueue = sandboxQueue(o.sandbox);
      await ensureCluster(taskQueue);
      const handle = await startBatch({
        taskQueue,
        dataset, agent: o.agent, repeats: o.repeats, concurrency: o.concurrency, resultsDir: o.results, jobsDir: o.jobsDir,
        imageAliases: o.imageAlias, agentArgs: o.agentArg, strict: o.strict, allowUnsupportedPairing: o.allowUnsupportedPairing,
        keepFinalState: o.keepFinalState, warmPool: o.warmPool,
        model: o.model, limits: { ...(o.maxTokens ? { maxTokens: o.maxTokens } : {}), ...(o.maxCost ? { maxCostUsd: o.maxCost } : {}) },
        taskFilter: o.task ? (id) => o.task!.some((g) => globToRegExp(g).test(id)) : undefined,
      });
      if (!o.json) for (const s of handle.skipped) console.log(yellow(`skipped ${s.task_id}: ${s.reason}`));
      try {
        if (o.detach) {
          if (o.json) printJson({ batch_id: handle.batchId, ui: handle.uiLink, results: handle.results.dir });
          else console.log(`${handle.batchId}\n${dim(`watch: npx berth status ${handle.batchId}   UI: ${handle.uiLink}`)}`);
          return;
        }
        if (!o.json) console.log(`${bold('batch')} ${handle.batchId}  ${dim(handle.uiLink)}`);
        const bar = !o.json && process.stdout.isTTY ? liveProgress(handle) : undefined;
        const summary = await handle.wait((row) => {
          if (!o.json && !bar) console.log(dim(`  done ${row.task_id} #${row.repeat}: ${row.mask_sample ? `masked (${row.failure_kind})` : `reward ${row.reward}`}`));
        }).finally(() => bar?.stop());
        if (o.json) printJson({ batch_id: summary.batchId, metrics: summary.metrics, rows: summary.rows, results: summary.resultsDir, ui: summary.uiLink });
        else printSummary(summary.rows, summary.metrics.mean_reward, summary.uiLink, summary.resultsDir);
      } finally {
        await handle.close();
      }
    });
}
