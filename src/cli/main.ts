import { Command, CommanderError } from 'commander';
import { registerRun } from './run.ts';
import { registerServer } from './server.ts';
import { registerWorker } from './worker.ts';
import { registerTasks } from './tasks.ts';
import { registerJanitor } from './janitor.ts';
import { registerBatchCommands } from './batch-commands.ts';
import { registerPrepare } from './prepare.ts';
import { registerReport } from './report.ts';
import { registerValidate } from './validate.ts';
import { registerSteer } from './steer.ts';
import { registerRegrade } from './regrade.ts';
import { registerAgents } from './agents.ts';
import { registerServe } from './serve.ts';
import { UserError, red } from './output.ts';

const program = new Command('berth')
  .description('Run Harbor-format task folders as durable evaluation episodes on Temporal')
  .showHelpAfterError()
  .exitOverride();

registerRun(program);
registerServer(program);
registerWorker(program);
registerTasks(program);
registerJanitor(program);
registerBatchCommands(program);
registerPrepare(program);
registerReport(program);
registerValidate(program);
registerSteer(program);
registerRegrade(program);
registerAgents(program);
registerServe(program);

try {
  await program.parseAsync(process.argv);
} catch (err) {
  if (err instanceof CommanderError) {
    process.exitCode = err.exitCode === 0 ? 0 : 2;
  } else {
    console.error(red(`berth: ${(err as Error).message}`));
    process.exitCode = err instanceof UserError ? err.exitCode : 1;
  }
}
