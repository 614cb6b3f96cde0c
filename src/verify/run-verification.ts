// The verify activity's one entry point, after each agent turn: shared mode in the agent's sandbox, or separate
// mode in a fresh verifier sandbox (Task Folder Verifiers § How the verifier runs, § Shared and separate
// verification). Returns the reward outcome; infrastructure failures come back masked, never as a reward of 0.
import { appendFile, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { SandboxLost, containerName, SeedFailed, withImageRuntime, type SandboxHandle, type SandboxSpec } from '../sandbox/index.ts';
import { episodeSecretValues, resolveTemplates, unsetVariableMessage } from '../task/index.ts';
import { validateAtif } from '../trajectory/atif.ts';
import { copyArtifactsOut, refreshLogsArtifacts, relativeTo, restoreArtifacts, type CopiedArtifact } from './artifacts.ts';
import { runCollectHooks } from './collect.ts';
import type { VerifyContext, VerifyResult } from './context.ts';
import { failureReason } from './failure-reason.ts';
import { isMasked, type FailureKind } from '../outcomes/failure-kinds.ts';
import { copyEntrypointOutput } from './entrypoint-output.ts';
import { collectAndScore, placementScript, preflight, preflightAndTest, runClear, runTestSh, uploadTestsAndTranscript } from './grade.ts';
import type { TestReport } from './sandbox-scripts.ts';
import { VerificationMasked } from './masked.ts';
import { redact, secretValues } from '../trajectory/redact.ts';
import type { RewardOutcome } from './reward.ts';
import { ARTIFACTS_LOGS, clearScript } from './sandbox-scripts.ts';
import { turnVerifier, type TurnVerifier } from './turn-settings.ts';
import { resolveVerifierImage } from './verifier-image.ts';
import { WORKSPACE_VAR } from './shim.ts';
import { separateVerifierSeedUser, sharedVerifierUser } from './verifier-user.ts';

const HEARTBEAT_MS = 10_000;

function maskedOutcome(kind: FailureKind, problem: string): RewardOutcome {
  return { reward: 0, verifier_rewards: {}, failure_kind: kind, failure_reason: failureReason(problem, undefined), masked: isMasked(kind) };
}

class Phases {
  readonly timings: Record<string, number> = {};
  constructor(private readonly ctx: VerifyContext) {}

  async run<T>(name: string, fn: () => Promise<T>): Promise<T> {
    this.ctx.signal?.throwIfAborted();
    const started = performance.now();
    try {
      return await fn();
    } finally {
      this.timings[name] = (this.timings[name] ?? 0) + (performance.now() - started) / 1000;
      this.ctx.heartbeat();
    }
  }
}

interface Shared {
  ctx: VerifyContext;
  turn: TurnVerifier;
  phases: Phases;
  warnings: string[];
  /** Values never to show: every secret plus the values [verifier].env read from the environment. */
  hidden: string[];
  artifacts: CopiedArtifact[];
}

export async function runVerification(ctx: VerifyContext): Promise<VerifyResult> {
  const check = validateAtif(ctx.trajectory);
  if (!check.ok) throw new Error(`the agent turn's transcript is not valid ATIF (a bug in the agent harness): ${check.errors.join('; ')}`);

  const turn = turnVerifier(ctx.task, ctx.stepIndex);
  const separate = turn.mode === 'separate';
  const state: Shared = {
    ctx,
    turn,
    phases: new Phases(ctx),
    warnings: [],
    hidden: secretValues(episodeSecretValues(ctx.task, ctx.hostEnv, ctx.secrets)),
    artifacts: [],
  };
  const timer = setInterval(() => ctx.heartbeat(), HEARTBEAT_MS);
  let outcome: RewardOutcome;
  try {
    outcome = separate ? await verifySeparate(state) : await verifyShared(state);
  } catch (err) {
    if (err instanceof VerificationMasked) outcome = maskedOutcome(err.kind, err.reason);
    else if (err instanceof SandboxLost) outcome = maskedOutcome('provider_unavailable', err instanceof Error ? err.message : String(err));
    else if (err instanceof SeedFailed) outcome = maskedOutcome(err.kind, `the separate verifier's sandbox could not start: ${err.message}`);
    else {
      // A bug, not a verdict: it goes to Temporal as it is, minus any secret its message carries.
      const message = err instanceof Error ? err.message : String(err);
      const clean = redact(message, state.hidden);
      throw clean === message ? err : new Error(clean);
    }
  } finally {
    clearInterval(timer);
  }
  if (outcome.failure_reason !== undefined) outcome.failure_reason = redact(outcome.failure_reason, state.hidden);
  const warnings = state.warnings.map((w) => redact(w, state.hidden));
  await logWarnings(ctx.logsDir, warnings);
  return {
    ...outcome,
    timings: state.phases.timings,
    logsDir: ctx.logsDir,
    artifacts: relativeTo(ctx.logsDir, state.artifacts),
    verifierMode: separate ? 'separate' : 'shared',
    warnings,
  };
}

/** Beside the turn's verifier logs (after /logs/verifier was copied there), one warning a line. */
export const WARNINGS_FILE = 'berth-warnings.txt';

async function logWarnings(logsDir: string, warnings: readonly string[]): Promise<void> {
  if (warnings.length === 0) return;
  const dir = join(logsDir, 'verifier');
  await mkdir(dir, { recursive: true });
  await appendFile(join(dir, WARNINGS_FILE), warnings.map((w) => `warning: ${w}\n`).join(''));
}

/** [verifier].env (or the step's) with `${VAR}` filled from [secrets] then the worker's environment. */
function verifierEnv(s: Shared): Record<string, string> {
  const env = resolveTemplates(s.turn.envTable, s.ctx.hostEnv, s.ctx.secrets);
  if (!env.ok) {
    throw new VerificationMasked('harbor:seed_failed', unsetVariableMessage({ table: '[verifier].env', key: env.key, variable: env.variable, secrets: true }));
  }
  s.hidden = secretValues([...s.hidden, ...env.sensitive]);
  return env.values;
}

async function verifyShared(s: Shared): Promise<RewardOutcome> {
  const { ctx, turn, phases } = s;
  const { provider, agent } = ctx;
  const env = verifierEnv(s);
  const hooks = turn.collect;
  const files = { task: ctx.task, turn, trajectory: ctx.trajectory, responseText: ctx.responseText, uploadTests: true };
  // Small test files are written by the clear's own exec; larger ones are uploaded after it.
  const placement = await placementScript(files);
  const user = await sharedVerifierUser(provider, agent, ctx.task, turn.explicitUser, ctx.agentImageUser);
  const run = { user, env, timeoutSec: turn.timeoutSec };
  const clearAndPlace = `${clearScript(turn.inputs)}\n${placement ?? ''}`;
  const network = ctx.network;
  if (hooks.length === 0 && placement !== null && user === 'root' && !('PATH' in env)) {
    await copySharedArtifacts(s);
    if (network) await phases.run('network', () => network.agentPhase('verify'));
    const { timedOut, report } = await phases.run('test', () => preflightAndTest(provider, agent, clearAndPlace, run));
    return scoreShared(s, timedOut, report);
  }
  if (hooks.length > 0) {
    if (network) await phases.run('network', () => network.agentPhase('collect'));
    await phases.run('preflight', () => preflight(provider, agent, null));
    await phases.run('collect', () => runCollectHooks(provider, agent, hooks, s.warnings, ctx.heartbeat, ctx.services));
    await copySharedArtifacts(s);
    if (network) await phases.run('network', () => network.agentPhase('verify'));
    await phases.run('prepare', () => runClear(provider, agent, turn.inputs, placement));
  } else {
    await copySharedArtifacts(s);
    if (network) await phases.run('network', () => network.agentPhase('verify'));
    await phases.run('prepare', () => preflight(provider, agent, clearAndPlace));
  }
  if (placement === null) await phases.run('prepare', () => uploadTestsAndTranscript(provider, agent, files));
  const { timedOut, report } = await phases.run('test', () => runTestSh(provider, agent, run));
  return scoreShared(s, timedOut, report);
}

/**
 * Shared mode: the artifacts are copied after the collect hooks and before test.sh runs, as Harbor collects them
 * (Task Folder Format § [verifier], collect: hooks run "before test.sh and any artifact collection"), so what
 * test.sh changes or removes is not what the record keeps; /logs/artifacts follows test.sh, as Harbor's mount of it
 * keeps what the verifier writes there. Collection never fails the trial: a failure only warns.
 */
async function copySharedArtifacts(s: Shared): Promise<void> {
  const { ctx, phases } = s;
  s.artifacts = await phases.run('artifacts', async () => {
    try {
      // /logs/artifacts itself is copied after test.sh (refreshLogsArtifacts), when test.sh's exec saw it non-empty.
      return await copyArtifactsOut(ctx.provider, ctx.agent, s.turn.artifacts, join(ctx.logsDir, 'artifacts'), s.warnings, true, { services: ctx.services });
    } catch (err) {
      if (!(err instanceof VerificationMasked) && !(err instanceof SandboxLost)) throw err;
      s.warnings.push(`artifacts were not copied: ${err instanceof Error ? err.message : String(err)}`);
      return [];
    }
  });
}

/** Reads back and scores /logs/verifier (shared mode). */
async function scoreShared(s: Shared, timedOut: boolean, report: TestReport): Promise<RewardOutcome> {
  const { ctx, phases } = s;
  const outcome = await phases.run('score', () => collectAndScore(ctx.provider, ctx.agent, ctx.logsDir, timedOut, s.hidden, report.snapshot, report.verifierLogsGone));
  // The verdict is in: a sandbox lost now only warns.
  if (!report.artifactsEmpty) await phases.run('artifacts', async () => {
    try {
      await refreshLogsArtifacts(ctx.provider, ctx.agent, join(ctx.logsDir, 'artifacts'), s.artifacts, s.warnings);
    } catch (err) {
      if (!(err instanceof SandboxLost) && !(err instanceof VerificationMasked)) throw err;
      s.warnings.push(`${ARTIFACTS_LOGS} was not copied after test.sh: ${err instanceof Error ? err.message : String(err)}`);
    }
  });
  return outcome;
}

/** The verifier image's entrypoint output goes beside the verifier logs as verifier-entrypoint-stdout.txt. */
async function keepEntrypointOutput(s: Shared, verifier: SandboxHandle): Promise<void> {
  try {
    await copyEntrypointOutput(s.ctx.provider, verifier, join(s.ctx.logsDir, 'verifier', 'verifier-entrypoint-stdout.txt'), s.hidden);
  } catch (err) {
    if (err instanceof SandboxLost) throw err;
    s.warnings.push(`could not copy the verifier image's entrypoint output: ${err instanceof Error ? err.message : String(err)}`);
  }
}

async function verifySeparate(s: Shared): Promise<RewardOutcome> {
  const { ctx, turn, phases } = s;
  const { provider, agent, task } = ctx;
  const env = verifierEnv(s);
  const environment = turn.environment;
  const verifierImage = turn.image;
  if (!environment || !verifierImage) throw new Error(`task ${task.id} verifies separately but has no verifier environment or image; the loader should have refused it`);
  const sandboxEnv = resolveTemplates(environment.env, ctx.hostEnv);
  if (!sandboxEnv.ok) {
    throw new VerificationMasked('harbor:seed_failed', unsetVariableMessage({ table: turn.environmentEnvTable ?? '[verifier.environment].env', key: sandboxEnv.key, variable: sandboxEnv.variable, secrets: false }));
  }
  s.hidden = secretValues([...s.hidden, ...sandboxEnv.sensitive]);

  if (ctx.collected) {
    s.artifacts = ctx.collected;
  } else {
    // A retried verification finds the agent's sandbox stopped by the attempt before: start it for the hooks again.
    const services = ctx.services ?? {};
    const sidecars = Object.entries(services).filter(([n]) => n !== 'main').map(([, h]) => h);
    await phases.run('collect', async () => {
      await provider.resume(agent);
      // Sidecars an earlier attempt stopped (never a one-shot service that completed with 0).
      for (const h of sidecars) if ((await provider.inspect(h)).exitCode !== 0) await provider.resume(h);
      await ctx.network?.agentPhase('collect');
      await runCollectHooks(provider, agent, turn.collect, s.warnings, ctx.heartbeat, services, 'main');
    });
    // Harbor's order: main's hooks and artifacts, main stopped, then the sidecars' hooks and artifacts. A later step
    // that still works in this group keeps it running.
    const keepRunning = ctx.agentNeededAfter === true;
    s.artifacts = await phases.run('artifacts', () => copyArtifactsOut(provider, agent, turn.artifacts, join(ctx.logsDir, 'artifacts'), s.warnings, false, {
      services,
      beforeSidecars: sidecars.length === 0 ? undefined : async () => {
        if (!keepRunning) await provider.stop(agent);
        await runCollectHooks(provider, agent, turn.collect, s.warnings, ctx.heartbeat, services, 'sidecars');
      },
    }));
    // Nothing the agent left running goes on while the verifier grades (the episode's teardown removes the whole group).
    if (!keepRunning) await phases.run('stop', () => Promise.all([agent, ...sidecars].map((h) => provider.stop(h))));
  }

  const image = await phases.run('image', () => resolveVerifierImage(provider, task, verifierImage, ctx.imageAliases ?? {}, { count: environment.gpus, key: ctx.stepIndex === null ? '[verifier.environment].gpus' : `the gpus of step ${task.steps[ctx.stepIndex]!.name}'s verifier environment` }));
  const name = containerName(ctx.naming.workflowId, ctx.naming.runId, 'verifier');
  const net = ctx.network
    ? await ctx.network.separate(turn.network)
    : { network: turn.network.network_mode === 'public' ? 'bridge' : 'none', env: {}, started: async () => undefined };
  const base: SandboxSpec = {
    name,
    labels: { batch: ctx.naming.batchId, workflowId: ctx.naming.workflowId, role: 'verifier' },
    image: image.ref,
    env: { ...sandboxEnv.values, ...net.env },
    network: net.network,
  };
  if (environment.workdir) base.workdir = environment.workdir;
  const seedUser = separateVerifierSeedUser(task, turn.explicitUser, image.config !== null);
  if (seedUser !== undefined) base.user = seedUser;
  if (environment.cpus) base.cpus = environment.cpus;
  if (environment.memory_mb) base.memoryMb = environment.memory_mb;
  if (environment.gpus) base.gpus = environment.gpus;
  // The image's entrypoint and HEALTHCHECK when on record, then [verifier.environment.healthcheck]; CPU hints.
  const spec = withImageRuntime(base, { config: image.config, healthcheck: environment.healthcheck, entrypointEnv: sandboxEnv.values, cpus: environment.cpus });

  let verifier: SandboxHandle | undefined;
  try {
    // A container left by an earlier attempt of this activity may hold its files: always start fresh.
    await provider.teardown(name);
    verifier = await phases.run('seed', async () => (await provider.seed(spec)).handle);
    const v = verifier;
    await phases.run('network', () => net.started(v));
    const pre = await phases.run('prepare', () => preflight(provider, v, clearScript(turn.inputs, false)));
    await phases.run('prepare', () => restoreArtifacts(provider, v, s.artifacts));
    await phases.run('prepare', () =>
      uploadTestsAndTranscript(provider, v, {
        task,
        turn,
        trajectory: ctx.trajectory,
        responseText: ctx.responseText,
        uploadTests: !(pre.shipsTestSh && !turn.python),
      }),
    );
    // A Python verifier's `workspace` is the task's working directory, where the artifacts restore it (nemo_gym.data.tasks.harbor.python_verifier).
    const testEnv = turn.python ? { ...env, [WORKSPACE_VAR]: agent.workdir } : env;
    const { timedOut, report } = await phases.run('test', () => runTestSh(provider, v, { user: v.user, env: testEnv, timeoutSec: turn.timeoutSec }));
    const outcome = await phases.run('score', () => collectAndScore(provider, v, ctx.logsDir, timedOut, s.hidden, report.snapshot, report.verifierLogsGone));
    if (spec.entrypoint) await keepEntrypointOutput(s, v);
    return outcome;
  } finally {
    await provider.teardown(verifier ?? name).catch((err: unknown) => {
      s.warnings.push(`could not remove the verifier's sandbox ${name}: ${err instanceof Error ? err.message : String(err)}; berth janitor removes it`);
    });
  }
}
