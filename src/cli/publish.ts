// `berth publish DATASET OUT --harbor`: a copy of the dataset that Harbor runs (docs/parameterized-and-publish.md).
import type { Command } from 'commander';
import { existsSync, readdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { loadDatasetToRun } from '../client/datasets.ts';
import { publishHarbor } from '../publish/harbor-copy.ts';
import { UserError, green, printJson, red, table } from './output.ts';

export function registerPublish(program: Command): void {
  program.command('publish').description('write a copy of a dataset that another runner reads (--harbor: Harbor)')
    .argument('<dataset>', 'a folder of task folders (templates rendered, task_data.py checked)')
    .argument('<out>', 'an empty or new folder for the copy')
    .option('--harbor', 'write the copy for Harbor (the only target)')
    .option('--task-data-image <image>', 'image with python3 and pydantic 2 that runs task_data.py (default: $BERTH_TASK_DATA_IMAGE, else berth-base:bookworm)')
    .option('--json', 'print JSON')
    .action(async (datasetArg: string, outArg: string, o: { harbor?: boolean; taskDataImage?: string; json?: boolean }) => {
      if (!o.harbor) throw new UserError('berth publish: pass --harbor (Harbor is the only target); see docs/parameterized-and-publish.md');
      const out = resolve(outArg);
      if (existsSync(out) && readdirSync(out).length > 0) throw new UserError(`berth publish: ${out} is not empty; choose a new or empty folder`);
      const dataset = await loadDatasetToRun(datasetArg, o.taskDataImage !== undefined ? { taskDataImage: o.taskDataImage } : {});
      const published = await publishHarbor(dataset, out);
      if (published.refused.length > 0) process.exitCode = 1;
      if (o.json) return printJson(published);
      console.log(table(['task_id', 'status', 'note'], [
        ...published.written.map((id) => [id, green('published'), (published.notes[id] ?? []).join('; ')]),
        ...published.refused.map((r) => [r.task_id, red('refused'), r.reason]),
      ]));
      console.log(`\n${published.written.length} published to ${out}, ${published.refused.length} refused`);
    });
}
