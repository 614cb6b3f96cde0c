// `berth tasks DATASET [--json]`: what loads (id, steps, verifier kind and mode, image mode) and what
// is refused, with the reason. Exit 2 when nothing loads.
import type { Command } from 'commander';
import { loadBerthConfig, loaderOptions } from '../config/berth-config.ts';
import { DatasetRefusal, parseImageAliases } from '../client/datasets.ts';
import { listTasks, type TasksReport } from '../client/tasks.ts';

function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
  return rows.map((r) => r.map((cell, c) => (c === r.length - 1 ? cell : cell.padEnd(widths[c]!))).join('  ')).join('\n');
}

export function renderTasksReport(report: TasksReport): string {
  const lines: string[] = [];
  if (report.tasks.length > 0) {
    const rows = [['TASK', 'STEPS', 'VERIFIER', 'MODE', 'IMAGE']];
    for (const t of report.tasks) {
      rows.push([t.task_id, t.multi_step ? `multi-step (${t.steps})` : 'single', t.verifier_kind, t.verifier_mode, t.image_mode]);
    }
    lines.push(table(rows));
  }
  if (report.refused.length > 0) {
    if (lines.length > 0) lines.push('');
    lines.push(`refused (${report.refused.length}):`);
    for (const r of report.refused) lines.push(`  ${r.task_id}: ${r.reason}`);
  }
  lines.push('', `${report.tasks.length} loaded, ${report.refused.length} refused`);
  return lines.join('\n');
}

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

export function registerTasks(program: Command): void {
  program
    .command('tasks')
    .description('list the tasks of a dataset that load, and those refused with the reason')
    .argument('<dataset>', 'a dataset folder (or one task folder)')
    .option('--json', 'print {"tasks": [...], "refused": [...]} as JSON')
    .option('--agent <name>', 'check the dataset\'s allowed_agents for this agent')
    .option('--allow-unsupported-pairing', 'skip the allowed_agents check')
    .option('--image-alias <FROM=TO>', 'map an image reference to another (repeatable)', collect, [] as string[])
    .option('--strict', 'fail when any task is refused')
    .action(async (dataset: string, o: { json?: boolean; agent?: string; allowUnsupportedPairing?: boolean; imageAlias: string[]; strict?: boolean }) => {
      try {
        const report = await listTasks(dataset, {
          agent: o.agent,
          allowUnsupportedPairing: o.allowUnsupportedPairing,
          imageAliases: parseImageAliases(o.imageAlias),
          strict: o.strict,
          ...loaderOptions(loadBerthConfig()),
          warn: (m) => process.stderr.write(`warning: ${m}\n`),
        });
        process.stdout.write(o.json ? `${JSON.stringify(report, null, 2)}\n` : `${renderTasksReport(report)}\n`);
        process.exitCode = report.tasks.length === 0 ? 2 : 0;
      } catch (e) {
        if (!(e instanceof DatasetRefusal) && !(e instanceof Error && e.message.startsWith('--image-alias'))) throw e;
        process.stderr.write(`error: ${e.message}\n`);
        process.exitCode = 2;
      }
    });
}
