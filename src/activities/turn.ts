import { Context, heartbeat } from '@temporalio/activity';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { harnessFor, installedAgent } from '../agents/index.ts';
import { egressGatewayUrl, openTurnScope } from '../host/model-gateway.ts';
import { loadBerthConfig } from '../config/berth-config.ts';
import type { Task } from '../task/index.ts';
import { clearTurnFiles, redact, redactTree, runVerification, type VerifyResult } from '../verify/index.ts';
import type { SandboxProvider } from '../sandbox/index.ts';
import type { AtifTrajectory } from '../verify/index.ts';
import type { AfterLastVerify, AgentTurnOutput, SandboxRef, StoredEpisodeFiles, TokenUsage, TurnOutcome, TurnRef } from './types.ts';
import { SLOT_FREED_SIGNAL } from '../config/batch-ids.ts';
import { quickUpload, storeInline } from './store-files.ts';
import { beating } from './beating.ts';
import { failIfEntrypointDied, keepEntrypointOutput } from '../host/entrypoint-output.ts';
import { typed } from './failures.ts';
import { groupNotes, watchGroup } from '../host/group-watch.ts';
import { handleOf, phaseTargets, servicesOf } from '../host/handle.ts';
import { verifyThenTearDown } from './final-verify.ts';
import { turnDirOf } from '../host/logs.ts';
import { agentGatewayHost, enterPhase, verifyNetwork } from '../host/phase-network.ts';
import { sandboxKindsOf, tearDownEpisode, type EpisodeSandboxKinds } from '../host/tear-down.ts';
import type { HostServices } from '../host/deps.ts';
import { hiddenValuesOf } from '../host/hidden.ts';
import { summariseTokens, trainingScopeFor } from './training.ts';

export type TurnRequest = TurnRef;

/** Rows and history keep a bounded response; the whole one stays on disk. */
const RESPONSE_CAP = 32 * 1024;


/** The episode's workflow run (activities of an episode always run inside one). */
const execution = () => Context.current().info.workflowExecution ?? { workflowId: 'local', runId: 'local' };
const runKey = (turn: number) => `${execution().runId}-t${turn + 1}`;

/** The user a turn's agent runs as (Multi-Step Harbor Tasks § Per-step agent user), else the sandbox's. */
function agentUser(task: Task, turn: number, sandbox: SandboxRef): string {
  const user = (task.multi_step ? task.steps[turn]?.agent.user : null) ?? task.agent.user;
  return user === null || user === undefined ? sandbox.user : String(user);
}

/** The turn's agent user, made the working directory's owner (Multi-Step Harbor Tasks § Per-step agent user). */
export async function agentUserFor(provider: SandboxProvider, task: Task, ref: TurnRef): Promise<string> {
  const user = agentUser(task, ref.turn, ref.sandbox);
  // Steps that set their own user switch the owner each turn, and back for a step that sets none.
  const perStep = task.multi_step && task.steps.some((s) => s.agent.user !== null);
  if (user !== ref.sandbox.user || perStep) {
    await provider.exec(handleOf(ref.sandbox), { command: `chown ${user} "${ref.sandbox.workdir}"`, user: 'root' });
  }
  return user;
}

/** One agent turn: the harness runs inside the sandbox; its transcript and full response go to the turn's logs. */
export async function agentTurn(deps: HostServices, req: TurnRequest): Promise<AgentTurnOutput> {
  return typed(() => beating(() => agentTurnHere(deps, req)));
}

/** The agent turn's work, for activities that run it (agentTurn, seedThenAgentTurn); errors untyped. */
export async function agentTurnHere(deps: HostServices, req: TurnRequest): Promise<AgentTurnOutput> {
  const task = await deps.loadEpisodeTask(req.input);
  const { provider } = deps;
  const handle = handleOf(req.sandbox);
  const logsDir = join(turnDirOf(req), 'agent');
  mkdirSync(logsDir, { recursive: true });
  if (req.turn > 0) await clearTurnFiles(provider, handle, task.verifier.inputs);
  const user = await agentUserFor(provider, task, req);
  await enterPhase(deps, task, phaseTargets(req.sandbox), req.turn, 'agent', req.input.agent);
  const instruction = task.multi_step ? task.steps[req.turn]!.instruction : task.instruction ?? '';
  const installed = installedAgent(req.input.agent);
  const egressHost = installed ? await agentGatewayHost(deps, task, req.turn, req.input.agent) : undefined;
  const model = installed
    ? await openTurnScope(deps.gateway, {
      input: req.input, agent: installed, turn: req.turn, runKey: runKey(req.turn), turnDir: (t) => turnDirOf({ ...req, turn: t }), ...(req.input.training ? { training: trainingScopeFor(req.input.training, req.sandbox.logsDir, req.turn, execution().workflowId) } : {}),
      ...(egressHost ? { gatewayUrl: await egressGatewayUrl(deps.gateway, egressHost) } : {}),
    })
    : undefined;
  let ended: ReturnType<NonNullable<typeof model>['close']> | undefined;
  // A Compose task's group is watched while the agent runs: a sidecar whose container is gone masks the episode.
  const watching = new AbortController();
  const signal = AbortSignal.any([Context.current().cancellationSignal, watching.signal]);
  let result;
  try {
    const run = harnessFor(req.input.agent).runTurn({
      provider, handle: { ...handle, user }, task, stepIndex: req.turn, instruction, user, workdir: handle.workdir, env: {},
      timeoutSec: req.plan.steps[req.turn]!.agentTimeoutSec, runKey: runKey(req.turn), logsDir, args: req.input.agentArgs,
      heartbeat: (d) => heartbeat(d), signal,
      ...(model ? { model: model.access, stop: model.stop } : {}),
      // A trainer's drain holds the turn's calls at the gateway: that time is not the agent's.
      ...(model && req.input.training ? { heldMs: () => model.scope.heldMs() } : {}),
    });
    run.catch(() => undefined);
    result = req.sandbox.group ? await Promise.race([run, watchGroup(provider, req.sandbox, watching.signal)]) : await run;
  } finally {
    watching.abort();
    ended = model?.close();
  }
  // The agent's output may echo what [environment].env gave it: nothing leaves the sandbox in clear.
  const hidden = hiddenValuesOf(task);
  await redactTree(logsDir, hidden);
  const responseText = redact(result.responseText, hidden);
  writeFileSync(join(logsDir, 'trajectory.json'), redact(JSON.stringify(result.trajectory, null, 2), hidden));
  writeFileSync(join(logsDir, 'response.txt'), responseText);
  const usage = ended?.usage ?? result.usage;
  return {
    responseText: responseText.slice(-RESPONSE_CAP), exitCode: result.exitCode, timings: result.timings, ...(usage ? { usage } : {}),
    ...(ended?.agentOutcome ? { agentOutcome: { ...ended.agentOutcome, reason: redact(ended.agentOutcome.reason, hidden) } } : {}),
  };
}

/**
 * Verification of one turn (Task Folder Verifiers), scored by the reward-file rules. With `teardownAfter` (the
 * episode's last turn) the sandbox is handed to removal once the outcome is recorded, and `tornDown` says so.
 */
type VerifyRequest = TurnRequest & { agentTimings: Record<string, number>; usage?: TokenUsage; agentOutcome?: { kind: string; reason: string } };

export async function verifyTurn(deps: HostServices, req: VerifyRequest & { teardownAfter?: boolean; afterLast?: AfterLastVerify }): Promise<TurnOutcome & { tornDown?: true; storedInline?: StoredEpisodeFiles }> {
  return typed(() => beating(async () => {
    const turnDir = turnDirOf(req);
    if (!req.teardownAfter) return verifyHere(deps, req, turnDir);
    const { workflowId, runId } = execution();
    const keep = req.input.keepFinalState && req.plan.verifierMode === 'shared'
      ? async () => {
        // The plan refuses --keep-final-state where the engine keeps none (capability finalState): absent here is a bug.
        if (!deps.provider.finalStates) throw new Error('this sandbox keeps no final state (--keep-final-state runs on --sandbox docker)');
        await deps.provider.finalStates.keep(handleOf(req.sandbox).name, { batch: req.input.batchId, workflowId, runId });
      }
      : undefined;
    const outcome = await verifyThenTearDown(turnDir, () => verifyHere(deps, req, turnDir), async () => tearDownEpisode(deps, workflowId, runId, await kindsOf(deps, req)), keep);
    const storedInline = req.afterLast ? await afterLastVerify(deps, req.afterLast, workflowId) : undefined;
    return { ...outcome, tornDown: true, ...(storedInline ? { storedInline } : {}) };
  }));
}

/**
 * The batch told its slot is free (best effort: else it counts the episode when it closes), and a small attempt's
 * upload. An attempt small enough for a request or a few goes up first, and the batch is told only if it did not
 * (its upload then waits for the episode's own activity): that saves the batch a workflow task per episode.
 */
async function afterLastVerify(deps: HostServices, after: AfterLastVerify, workflowId: string): Promise<StoredEpisodeFiles | undefined> {
  const ctx = Context.current();
  const freeSlot = async (): Promise<void> => {
    if (after.slotFreedTo) await ctx.client.workflow.getHandle(after.slotFreedTo).signal(SLOT_FREED_SIGNAL, { workflowId }).catch(() => undefined);
  };
  if (!after.store) return freeSlot().then(() => undefined);
  const quick = quickUpload(after.store);
  if (!quick) await freeSlot();
  const left = ctx.info.startToCloseTimeoutMs - (Date.now() - ctx.info.currentAttemptScheduledTimestampMs);
  const stored = await storeInline(deps, after.store, left);
  if (quick && !stored) await freeSlot();
  return stored;
}

/** What the episode's task can have made (removal by name is cheap only for those); a task that no longer loads: all of them. */
const kindsOf = (deps: HostServices, req: TurnRequest): Promise<EpisodeSandboxKinds | undefined> =>
  deps.loadEpisodeTask(req.input).then(sandboxKindsOf, () => undefined);

async function verifyHere(deps: HostServices, req: VerifyRequest, turnDir: string): Promise<TurnOutcome> {
  const task = await deps.loadEpisodeTask(req.input);
  const { provider } = deps;
  const handle = handleOf(req.sandbox);
  const secrets = loadBerthConfig().config.secrets;
  const hidden = hiddenValuesOf(task, secrets);
  if (req.sandbox.entrypoint) await failIfEntrypointDied(provider, handle, turnDir, hidden);
  const notes = req.sandbox.group ? await groupNotes(provider, req.sandbox) : [];
  const trajectory = JSON.parse(readFileSync(join(turnDir, 'agent', 'trajectory.json'), 'utf8')) as AtifTrajectory;
  const responseText = readFileSync(join(turnDir, 'agent', 'response.txt'), 'utf8');
  const { workflowId, runId } = execution();
  const out = await runVerification({
    provider, agent: handle, ...(req.sandbox.group ? { services: servicesOf(req.sandbox) } : {}),
    task, stepIndex: task.multi_step ? req.turn : null,
    logsDir: turnDir, trajectory, responseText, naming: { workflowId, runId, batchId: req.input.batchId },
    hostEnv: process.env, secrets, imageAliases: req.input.imageAliases, heartbeat: () => heartbeat(),
    agentNeededAfter: req.turn < req.plan.steps.length - 1,
    network: verifyNetwork(deps, task, phaseTargets(req.sandbox), req.turn, req.input.agent),
    signal: Context.current().cancellationSignal,
  });
  // The image entrypoint's output goes with this turn's verifier logs (after they landed there).
  if (req.sandbox.entrypoint) await keepEntrypointOutput(provider, handle, turnDir, hidden);
  const outcome = turnOutcomeOf(out, { step: req.plan.steps[req.turn]!.name, responseText, agentTimings: req.agentTimings, usage: req.usage, hidden, agentOutcome: req.agentOutcome, notes });
  return req.input.training ? { ...outcome, training: summariseTokens(req.sandbox.logsDir, req.input.training) } : outcome;
}

const NOTE_CAP = 4000;

/** A turn's outcome from its verification: what the workflow keeps of it (bounded, redacted). */
export function turnOutcomeOf(out: VerifyResult, t: {
  step: string; responseText: string; agentTimings: Record<string, number>; usage?: TokenUsage; hidden: readonly string[];
  agentOutcome?: { kind: string; reason: string };
  /** What the rollout left that does not change the score (a sidecar that exited non-zero). */
  notes?: readonly string[];
}): TurnOutcome {
  return {
    step: t.step,
    reward: out.masked ? null : out.reward,
    verifier_rewards: out.verifier_rewards,
    ...(out.reward_components ? { reward_components: out.reward_components } : {}),
    // The agent's own ending (context window, a limit) names the turn unless the verifier has a kind of its own.
    failure_kind: out.failure_kind ?? (out.masked ? null : t.agentOutcome?.kind ?? null),
    failure_reason: out.failure_reason ? redact(out.failure_reason, t.hidden) : out.masked ? null : t.agentOutcome?.reason ?? null,
    masked: out.masked,
    response_text: t.responseText.slice(-RESPONSE_CAP),
    timings: { ...t.agentTimings, verify: Object.values(out.timings).reduce((a, b) => a + b, 0) },
    ...(t.usage ? { usage: t.usage } : {}),
    ...(t.notes && t.notes.length > 0 ? { notes: t.notes.map((n) => redact(n, t.hidden).slice(-NOTE_CAP)) } : {}),
  };
}
