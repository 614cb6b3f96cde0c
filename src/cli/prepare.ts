import type { Command } from 'commander';
import { basename, resolve } from 'node:path';
import { connect } from '../client/connect.ts';
import { prepareTasks } from '../client/prepare.ts';
import { ResultsFolder } from '../client/results.ts';
import { loadBerthConfig, loaderOptions } from '../config/berth-config.ts';
import { loadDataset, toSkippedEntry } from '../task/index.ts';
import { ensureCluster } from './ensure.ts';
import { keyValue } from './options.ts';
import { UserError, green, printJson, red, table } from './output.ts';
import { INSTALLED_AGENTS, isInstalledAgent } from '../agents/installed/registry.ts';

export function registerPrepare(program: Command): void {
  program.command('prepare').description('load a dataset, build or check every task image, and record what is ready')
    .argument('<dataset>', 'a folder of task folders')
    .option('--image-alias <from=to>', 'map an image reference to a local one (repeatable)', keyValue('--image-alias'))
    .option('--results <dir>', 'where skipped.json goes (default results/prepare-<dataset>)')
    .option('--agent <name>', 'also install this agent into a layer over every task\'s image (berth agents lists them)')
    .option('--json', 'print JSON')
    .action(async (datasetArg: string, o: { imageAlias?: Record<string, string>; results?: string; json?: boolean; agent?: string }) => {
      if (o.agent && !isInstalledAgent(o.agent)) throw new UserError(`--agent ${o.agent}: not an installed agent; choose one of ${Object.keys(INSTALLED_AGENTS).join(', ')}`);
      const config = loadBerthConfig();
      const imageAliases = { ...config.config.images.aliases, ...(o.imageAlias ?? {}) };
      const loader = loaderOptions(config);
      const dataset = await loadDataset(resolve(datasetArg), { imageAliases, ...loader, logger: { warn: () => undefined } });
      await ensureCluster();
      const { client, connection } = await connect();
      try {
        const tasks = dataset.tasks.map((t) => ({ taskId: t.id, taskPath: t.path, digest: t.digest }));
        const { outcomes, skipped } = await prepareTasks(client, {
          datasetPath: dataset.root, tasks, imageAliases, ...(o.agent ? { agent: o.agent } : {}),
          ...(loader.separateVerifierForArtifacts ? { separateVerifierForArtifacts: true } : {}),
        });
        const all = [...dataset.refused.map(toSkippedEntry), ...skipped];
        const folder = new ResultsFolder(resolve(o.results ?? `results/prepare-${basename(dataset.root)}`));
        folder.writeSkipped(all);
        if (all.length > 0) process.exitCode = 1;
        if (o.json) return printJson({ prepared: outcomes.filter((x) => x.ok), skipped: all, skipped_file: `${folder.dir}/skipped.json` });
        console.log(table(['task_id', 'status', 'image'], [
          ...outcomes.map((x) => [x.taskId, x.ok ? green(x.built || x.layer?.built ? 'built' : 'ready') : red('failed'), x.ok ? x.layer?.tag ?? x.image : x.reason.split('\n')[0]!.slice(0, 100)]),
          ...dataset.refused.map((r) => [r.task_id, red('refused'), r.message.split('\n')[0]!.slice(0, 100)]),
        ]));
        console.log(`\n${outcomes.filter((x) => x.ok).length} ready, ${all.length} skipped (${folder.dir}/skipped.json)`);
      } finally {
        await connection.close();
      }
    });
}
