// Runs an installed agent for one turn: detached inside the sandbox (a retried activity re-attaches), as the turn's
// user in its working directory, under the turn's budget, with the gateway's URL and the episode's token in its
// environment. Its own logs are copied to the host and turned into the turn's ATIF trajectory.
import { readFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { shellQuote } from '../../sandbox/index.ts';
import { runDetached, detachedKey } from '../detached-run.ts';
import { stopScript } from '../moving-deadline.ts';
import { AgentConfigError } from '../errors.ts';
import { AGENT_LOGS, copyLogToHost, secondsSince, writeTrajectory } from '../logs.ts';
import { jsonArg } from './agent-files.ts';
import type { AgentHarness, AgentTurnContext, AgentTurnResult } from '../types.ts';
import { skillsDirIn } from '../task-file.ts';
import type { AgentRun, InstalledAgent } from './types.ts';

const INSTRUCTION = `${AGENT_LOGS}/instruction.md`;
const HOME = `${AGENT_LOGS}/home`;

/**
 * --agent-arg values for an agent: its documented options only (and `model`, which is --model), defaults filled in.
 * Checked before a batch (the probe) and again by each turn.
 */
export function agentArgsOf(agent: Pick<InstalledAgent, 'name' | 'options'>, given: Readonly<Record<string, string>>): Record<string, string> {
  const options = agent.options ?? [];
  const out: Record<string, string> = {};
  for (const o of options) if (o.default !== null) out[o.name] = o.default;
  for (const [k, v] of Object.entries(given)) {
    if (k === 'model') continue;
    const o = options.find((x) => x.name === k);
    if (!o) {
      throw new AgentConfigError(`--agent-arg ${k}: ${agent.name} has no such option; it takes ${options.length ? options.map((x) => x.name).join(', ') : 'none'} (see berth agents)`);
    }
    if (o.choices && !o.choices.includes(v)) throw new AgentConfigError(`--agent-arg ${k}=${v}: ${agent.name} takes one of ${o.choices.join(', ')}`);
    if (o.json) jsonArg(agent.name, k, v);
    out[k] = v;
  }
  return out;
}

export function agentRunOf(ctx: AgentTurnContext, agent: Pick<InstalledAgent, 'name' | 'options'>): AgentRun {
  const m = ctx.model;
  if (!m) throw new AgentConfigError('an installed agent needs the model gateway: run it through a Berth worker (berth run --agent NAME --model provider/model)');
  return {
    gatewayUrl: m.gatewayUrl, token: m.token, model: m.model, provider: m.provider, instructionFile: INSTRUCTION, home: HOME, workdir: ctx.workdir,
    args: agentArgsOf(agent, ctx.args), mcpServers: ctx.task.environment.mcp_servers, skillsDir: skillsDirIn(ctx.task, ctx.workdir),
  };
}

const configName = (i: number): string => `config-${i}`;

/** The turn's fresh home: the instruction, the harness's own configuration files and the task's skills, all the agent user's. */
function prepareScript(agent: InstalledAgent, run: AgentRun, user: string): string {
  const stale = [agent.output, ...(agent.extraLogs?.(run) ?? []), INSTRUCTION].map(shellQuote).join(' ');
  const configs = (agent.configFiles?.(run) ?? []).map((f, i) =>
    `mkdir -p "$(dirname ${shellQuote(f.path)})" && mv "$BERTH_STAGE/${configName(i)}" ${shellQuote(f.path)}`);
  const skills = run.skillsDir !== null && agent.skillsHome
    ? [`if [ -d ${shellQuote(run.skillsDir)} ]; then mkdir -p ${shellQuote(agent.skillsHome(run))} && cp -R ${shellQuote(`${run.skillsDir}/.`)} ${shellQuote(agent.skillsHome(run))}; fi`]
    : [];
  return [
    `rm -rf ${stale} ${shellQuote(HOME)}`,
    `mkdir -p ${shellQuote(HOME)}`,
    `mv "$BERTH_STAGE/instruction.md" ${shellQuote(INSTRUCTION)}`,
    ...configs,
    ...skills,
    'rm -rf "$BERTH_STAGE"',
    `chown -R ${shellQuote(user)} -- ${shellQuote(INSTRUCTION)} ${shellQuote(HOME)}`,
  ].join('\n');
}

export { stopScript };

export async function runInstalledTurn(agent: InstalledAgent, ctx: AgentTurnContext): Promise<AgentTurnResult> {
  const run = agentRunOf(ctx, agent);
  const started = Date.now();
  const key = detachedKey(agent.name, ctx.runKey);
  let stopped = false;
  void ctx.stop?.then(async () => {
    stopped = true;
    await ctx.provider.exec(ctx.handle, { command: stopScript(key), user: 'root', workdir: '/', timeoutSec: 30 }).catch(() => undefined);
  });
  const res = await runDetached(ctx, {
    prefix: agent.name,
    command: agent.command(run),
    env: { ...ctx.env, ...agent.env(run) },
    outputPath: agent.output,
    stage: [
      { name: 'instruction.md', content: ctx.instruction, mode: 0o644 },
      ...(agent.configFiles?.(run) ?? []).map((f, i) => ({ name: configName(i), content: f.content, mode: 0o600 })),
    ],
    prepare: prepareScript(agent, run, ctx.user),
  });
  const files: Record<string, string> = {};
  let stdout = '';
  if (await copyLogToHost(ctx, agent.output)) stdout = await readFile(join(ctx.logsDir, basename(agent.output)), 'utf8');
  for (const f of agent.extraLogs?.(run) ?? []) {
    if (await copyLogToHost(ctx, f)) files[f] = await readFile(join(ctx.logsDir, basename(f)), 'utf8');
  }
  const { trajectory, responseText } = agent.transcript({ stdout, files, sessionId: ctx.runKey, instruction: ctx.instruction, model: run.model });
  trajectory.extra = { ...trajectory.extra, exit_code: res.exitCode, timed_out: res.timedOut, ...(stopped ? { stopped_by_berth: true } : {}), ...(res.lost ? { ended_unrecorded: res.lost } : {}) };
  await writeTrajectory(ctx, trajectory);
  return { responseText, exitCode: res.exitCode, timedOut: res.timedOut, trajectory, timings: { agent: secondsSince(started) } };
}

export function installedHarness(agent: InstalledAgent): AgentHarness {
  return { name: agent.name, runTurn: (ctx) => runInstalledTurn(agent, ctx) };
}
