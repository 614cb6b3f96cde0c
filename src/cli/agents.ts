import type { Command } from 'commander';
import { installedAgentListing } from '../worker.ts';
import { bold, dim, printJson, table } from './output.ts';

const BUILT_IN = [
  ['oracle', '-', 'runs the task\'s reference solution'],
  ['nop', '-', 'does nothing'],
  ['command', '-', '--agent-arg cmd="..." inside the sandbox'],
  ['openai', '-', 'an OpenAI-compatible tool-calling loop on the worker, through the gateway'],
];

/** `berth agents`: the agents, their pinned versions, their --agent-arg options, and the agent layers this host's engine holds. */
export function registerAgents(program: Command): void {
  program.command('agents').description('list the agents, their pinned versions, and the agent layers this host has')
    .option('--json', 'print JSON')
    .action(async (o: { json?: boolean }) => {
      const { agents: installed, layers } = await installedAgentListing();
      if (o.json) return printJson({ agents: installed, built_in: BUILT_IN.map(([name, , what]) => ({ name, what })) });
      console.log(table(['agent', 'version', 'model providers', 'install', 'layers here'], [
        ...installed.map((a) => [a.name, a.version, a.providers.join(', '), a.install, String(a.layers.length)]),
        ...BUILT_IN.map(([name, version, what]) => [name!, version!, '-', dim(what!), '-']),
      ]));
      const withOptions = installed.filter((a) => a.options.length > 0);
      if (withOptions.length > 0) {
        console.log(`\n${bold('options')} ${dim('(--agent-arg KEY=VALUE)')}`);
        console.log(table(['agent', 'option', 'default', 'what'], withOptions.flatMap((a) => a.options.map((opt) => [
          a.name, opt.name, opt.default ?? dim('(the agent\'s own)'), `${opt.description}${opt.choices ? ` [${opt.choices.join('|')}]` : ''}`,
        ]))));
      }
      if (layers.length > 0) {
        console.log(`\n${bold('layers on this host')}`);
        console.log(table(['tag', 'agent', 'version', 'size MB', 'built'], layers.map((l) => [l.tag, l.agent, l.version, String(l.sizeMb), l.created])));
      }
    });
}
