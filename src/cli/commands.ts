// The command table: which module defines each command, and how the top-level help lists it. A command's module
// (and with it the Temporal client, dockerode, the Kubernetes client) loads only when the command line names it, so
// `berth --help` loads commander and this table. test/cli/command-table.unit.test.ts holds the listing to the modules.
import { Command, Help } from 'commander';
import { finalStateRetentionDays } from '../config/env.ts';

type Register = (program: Command) => void;

interface CommandModule {
  load: () => Promise<Register>;
  /** The commands it defines, as the top-level help lists them: the term (name, options, arguments), the description. */
  commands: Array<[term: string, description: string | (() => string)]>;
}

/** As src/sandbox/docker/final-state.ts's retentionDays: the setting, else 7 days (the command-table test compares). */
const keptStateDays = () => finalStateRetentionDays() ?? 7;

export const COMMAND_MODULES: CommandModule[] = [
  { load: async () => (await import('./run.ts')).registerRun, commands: [['run [options] [dataset]', 'run an agent over a dataset, one durable episode per (task, repeat)']] },
  { load: async () => (await import('./server.ts')).registerServer, commands: [['server', 'the embedded Temporal dev server and its worker']] },
  { load: async () => (await import('./worker.ts')).registerWorker, commands: [['worker [options]', 'run a Berth worker (shared queue + this host\'s sandbox queue) in the foreground']] },
  { load: async () => (await import('./tasks.ts')).registerTasks, commands: [['tasks [options] <dataset>', 'list the tasks of a dataset that load, and those refused with the reason']] },
  { load: async () => (await import('./janitor.ts')).registerJanitor, commands: [['janitor [options]', 'Remove sandbox containers whose episode is no longer running (asks Temporal)']] },
  {
    load: async () => (await import('./batch-commands.ts')).registerBatchCommands,
    commands: [
      ['status [options] [batch]', 'progress of a batch (or the recent batches)'],
      ['results [options] <batch>', 'collect the rows of a batch into its results folder'],
      ['retry [options] <batch>', 'start new attempts of masked, failed or named episodes of a batch'],
      ['cancel [options] <batch>', 'cancel a batch and its running episodes, or with --task only those episodes (their sandboxes are removed)'],
    ],
  },
  { load: async () => (await import('./prepare.ts')).registerPrepare, commands: [['prepare [options] <dataset>', 'load a dataset, build or check every task image, and record what is ready']] },
  {
    load: async () => (await import('./report.ts')).registerReport,
    commands: [
      ['view [options] <batch>', 'serve the report of a batch, with a page per episode, on localhost'],
      ['report [options] <batch>', 'write a self-contained HTML report of a batch (a page per episode) from its results folder'],
    ],
  },
  { load: async () => (await import('./validate.ts')).registerValidate, commands: [['validate [options] <dataset>', 'run the oracle over every task: does each reference solution score 1?']] },
  {
    load: async () => (await import('./steer.ts')).registerSteer,
    commands: [
      ['pause [options] <batch>', 'start no new episode of a batch until resumed (running ones go on)'],
      ['resume [options] <batch>', 'let a paused batch start episodes again'],
      ['resize [options] <batch> <n>', 'change how many episodes of a batch run at once'],
    ],
  },
  {
    load: async () => (await import('./regrade.ts')).registerRegrade,
    commands: [
      ['regrade [options] <batch>', 'run verification again for a batch\'s finished episodes (the task\'s tests/ as they are now), without the agent'],
      ['gc [options] [batch]', () => `remove kept final states (berth run --keep-final-state): by default those older than ${keptStateDays()} days; with a batch, also its objects in the results store`],
    ],
  },
  { load: async () => (await import('./agents.ts')).registerAgents, commands: [['agents [options]', 'list the agents, their pinned versions, and the agent layers this host has']] },
  { load: async () => (await import('./publish.ts')).registerPublish, commands: [['publish [options] <dataset> <out>', 'write a copy of a dataset that another runner reads (--harbor: Harbor)']] },
  { load: async () => (await import('./serve.ts')).registerServe, commands: [['serve [options]', 'serve rollouts to a trainer: Berth\'s rollout API (/runs) and NeMo Gym\'s agent server (/run); docs/training.md']] },
  { load: async () => (await import('./setup.ts')).registerSetup, commands: [['setup [options]', 'set up this machine for Berth: the Docker engine, the base image, Docker Compose v2, the Temporal CLI']] },
];

const nameOf = (term: string) => term.split(' ')[0]!;

/**
 * The program with every command: those `argv` names (any word of it, so `berth help run` and options before the
 * command count) defined by their modules, the others as entries of the listing only. `all`: every module loaded.
 */
export async function berthProgram(argv: string[], opts: { all?: boolean } = {}): Promise<Command> {
  const program = new Command('berth')
    .description('Run Harbor-format task folders as durable evaluation episodes on Temporal')
    .showHelpAfterError()
    .exitOverride();
  const words = new Set(argv);
  const listed = new Map<Command, string>();
  for (const m of COMMAND_MODULES) {
    if (opts.all || m.commands.some(([term]) => words.has(nameOf(term)))) {
      (await m.load())(program);
      continue;
    }
    for (const [term, description] of m.commands) {
      const stub = program.command(nameOf(term)).description(typeof description === 'string' ? description : description());
      listed.set(stub, term);
    }
  }
  const help = new Help();
  program.configureHelp({ subcommandTerm: (cmd) => listed.get(cmd) ?? help.subcommandTerm(cmd) });
  return program;
}
