import type { Command } from 'commander';
import { basename, resolve } from 'node:path';
import { connect } from '../client/connect.ts';
import { loadDatasetToRun } from '../client/datasets.ts';
import { prepareInput, prepareTasks } from '../client/prepare.ts';
import { ResultsFolder } from '../client/results.ts';
import { INSTALLED_AGENT_NAMES, isInstalledAgentName } from '../config/agents.ts';
import type { SandboxProviderName } from '../config/berth-config.ts';
import { ensureCluster } from './ensure.ts';
import { sandboxOption, sandboxQueue } from './sandbox-option.ts';
import { keyValue } from './options.ts';
import { UserError, green, printJson, red, table } from './output.ts';

export function registerPrepare(program: Command): void {
  program.command('prepare').description('load a dataset, build or check every task image, and record what is ready')
    .argument('<dataset>', 'a folder of task folders')
    .option('--image-alias <from=to>', 'map an image reference to a local one (repeatable)', keyValue('--image-alias'))
    .option('--results <dir>', 'where skipped.json goes (default results/prepare-<dataset>)')
    .option('--agent <name>', 'also install this agent into a layer over every task\'s image (berth agents lists them)')
    .option('--json', 'print JSON')
    .addOption(sandboxOption('prepare for this sandbox\'s workers (kubernetes: images pushed to [kubernetes].registry; default: berth.toml [sandbox] provider, else docker)'))
    .action(async (datasetArg: string, o: { imageAlias?: Record<string, string>; results?: string; json?: boolean; agent?: string; sandbox?: SandboxProviderName }) => {
      if (o.agent && !isInstalledAgentName(o.agent)) throw new UserError(`--agent ${o.agent}: not an installed agent; choose one of ${INSTALLED_AGENT_NAMES.join(', ')}`);
      const dataset = await loadDatasetToRun(datasetArg, { imageAliases: o.imageAlias });
      const queue = sandboxQueue(o.sandbox);
      await ensureCluster(queue);
      const { client, connection } = await connect();
      try {
        const tasks = dataset.tasks.map((t) => ({ taskId: t.id, taskPath: t.path, digest: t.digest }));
        const { outcomes, skipped } = await prepareTasks(client, prepareInput(dataset, tasks, o.agent), queue);
        const all = [...dataset.refused, ...skipped];
        const folder = new ResultsFolder(resolve(o.results ?? `results/prepare-${basename(dataset.root)}`));
        folder.writeSkipped(all);
        if (all.length > 0) process.exitCode = 1;
        if (o.json) return printJson({ prepared: outcomes.filter((x) => x.ok), skipped: all, skipped_file: `${folder.dir}/skipped.json` });
        console.log(table(['task_id', 'status', 'image'], [
          ...outcomes.map((x) => [x.taskId, x.ok ? green(x.built || x.layer?.built ? 'built' : 'ready') : red('failed'), x.ok ? x.layer?.tag ?? x.image : x.reason.split('\n')[0]!.slice(0, 100)]),
          ...dataset.refused.map((r) => [r.task_id, red('refused'), r.reason.split('\n')[0]!.slice(0, 100)]),
        ]));
        console.log(`\n${outcomes.filter((x) => x.ok).length} ready, ${all.length} skipped (${folder.dir}/skipped.json)`);
      } finally {
        await connection.close();
      }
    });
}
