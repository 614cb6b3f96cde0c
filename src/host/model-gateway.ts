// This worker's model gateway (docs/design.md section 5): started on first use on the engine's bridge gateway
// address, and the per-turn scope an agent's calls are counted in.
import { gatewayRetryBaseMs } from '../config/env.ts';
import type { SandboxProvider } from '../sandbox/index.ts';
import { createHmac, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { appendFile } from 'node:fs/promises';
import { join } from 'node:path';
import { AgentConfigError, type InstalledAgent, type ModelAccess } from '../agents/index.ts';
import {
  gatewayHost, ModelGateway, splitModel, upstreamFor, type CallRecord, type Provider, type Scope, type TrainingScope, type Upstream,
} from '../gateway/index.ts';
import { homePath } from '../config/paths.ts';
import { loadBerthConfig } from '../config/berth-config.ts';
import type { EpisodeInput, TokenUsage } from '../activities/types.ts';
import { OnDemand } from './on-demand.ts';

/** A port kept from the last start, so an agent still running from before a worker restart reaches it again. */
function rememberedPort(host: string): number {
  try {
    return Number((JSON.parse(readFileSync(homePath('gateway-port.json'), 'utf8')) as Record<string, number>)[host] ?? 0);
  } catch {
    return 0;
  }
}

function rememberPort(host: string, port: number): void {
  const file = homePath('gateway-port.json');
  const ports = existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as Record<string, number>) : {};
  writeFileSync(file, JSON.stringify({ ...ports, [host]: port }));
}

async function start(provider: SandboxProvider): Promise<ModelGateway> {
  const host = await gatewayHost(() => provider.network.defaultRanges());
  const baseDelayMs = gatewayRetryBaseMs();
  const retry = baseDelayMs ? { baseDelayMs } : {};
  let gateway = new ModelGateway({ host, port: rememberedPort(host), retry });
  try {
    await gateway.start();
  } catch {
    gateway = new ModelGateway({ host, port: 0, retry });
    await gateway.start();
  }
  rememberPort(host, gateway.port);
  return gateway;
}

/**
 * The gateway's URL for a sandbox on the egress network alone (an installed agent's no-network or allowlist phase):
 * the same gateway served on the host's address there, the one address such a sandbox reaches besides the proxy.
 */
export async function egressGatewayUrl(gateways: OnDemand<ModelGateway>, egressHost: string): Promise<string> {
  const url = await (await gateways.get()).alsoOn(egressHost, rememberedPort(egressHost));
  rememberPort(egressHost, Number(new URL(url).port));
  return url;
}

/** A worker's gateway, started on first use on its engine's bridge gateway address. */
export function workerGateway(provider: SandboxProvider): OnDemand<ModelGateway> {
  return new OnDemand(() => start(provider));
}

export async function stopWorkerGateway(gateway: OnDemand<ModelGateway>): Promise<void> {
  const g = gateway.take();
  if (g) await (await g.catch(() => undefined))?.stop().catch(() => undefined);
}

/** Tokens are derived from the turn's key and a secret of this host: a re-attached turn gets the same one. */
function tokenFor(runKey: string): string {
  const file = homePath('gateway-secret');
  if (!existsSync(file)) {
    mkdirSync(homePath(), { recursive: true });
    writeFileSync(file, randomBytes(32).toString('hex'), { mode: 0o600, flag: 'wx' });
  }
  const secret = readFileSync(file, 'utf8').trim();
  return `berth-${createHmac('sha256', secret).update(runKey).digest('base64url')}`;
}

export const CALLS_FILE = 'model-calls.jsonl';

function readCalls(path: string): CallRecord[] {
  if (!existsSync(path)) return [];
  return readFileSync(path, 'utf8').split('\n').filter((l) => l.trim() !== '').flatMap((l) => {
    try {
      return [JSON.parse(l) as CallRecord];
    } catch {
      return [];
    }
  });
}

export function usageOfCalls(calls: readonly CallRecord[]): TokenUsage {
  const priced = calls.filter((c) => c.costUsd !== null);
  return {
    promptTokens: calls.reduce((s, c) => s + c.inputTokens, 0),
    completionTokens: calls.reduce((s, c) => s + c.outputTokens, 0),
    calls: calls.length,
    cachedTokens: calls.reduce((s, c) => s + c.cachedInputTokens, 0),
    ...(priced.length > 0 ? { costUsd: Math.round(priced.reduce((s, c) => s + c.costUsd!, 0) * 1e8) / 1e8 } : {}),
  };
}

/** `provider/model` from --model, checked against what the agent speaks. */
export function modelOf(input: Pick<EpisodeInput, 'model' | 'agentArgs'>, agent: Pick<InstalledAgent, 'name' | 'providers'>): { provider: Provider; model: string } {
  const spec = input.model ?? input.agentArgs['model'];
  if (!spec) throw new AgentConfigError(`the ${agent.name} agent needs a model: pass --model ${agent.providers[0]}/<model>`);
  const m = splitModel(spec, agent.providers[0]!);
  if (!agent.providers.includes(m.provider)) {
    throw new AgentConfigError(`the ${agent.name} agent talks to ${agent.providers.join(' or ')}, not ${m.provider}: pass --model ${agent.providers[0]}/<model>`);
  }
  return m;
}

export function upstreamOf(provider: Provider): Upstream {
  return upstreamFor(provider, process.env, loadBerthConfig().config.secrets);
}

export interface TurnScope {
  access: ModelAccess;
  scope: Scope;
  /** Resolves when the episode passes --max-tokens or --max-cost. */
  stop: Promise<void>;
  /** Revokes the token; the turn's usage and, when the turn ended on its own terms, why. */
  close(): { usage: TokenUsage; agentOutcome?: { kind: string; reason: string } };
}

/** Registers the turn's token: calls are appended to the turn's model-calls.jsonl as they end. */
export async function openTurnScope(gateways: OnDemand<ModelGateway>, opts: {
  input: EpisodeInput; agent: InstalledAgent; turn: number; runKey: string;
  /** Training mode: the capture scope (src/activities/training.ts makes it: records beside the episode's logs, the run's policy state). */
  training?: TrainingScope;
  /** A turn's logs folder (turn-N/, or steps/<name>/ of a multi-step task). */
  turnDir: (turn: number) => string;
  /** Where the sandbox reaches the gateway in this phase; default: its address on the engine's bridge. */
  gatewayUrl?: string;
}): Promise<TurnScope> {
  const training = opts.input.training;
  // In training mode the agent speaks its own dialect to the gateway, which sends every call to the policy.
  const { provider, model } = training ? { provider: opts.agent.providers[0]!, model: training.model } : modelOf(opts.input, opts.agent);
  const gateway = await gateways.get();
  const dir = join(opts.turnDir(opts.turn), 'agent');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, CALLS_FILE);
  const earlier = Array.from({ length: opts.turn }, (_, t) => readCalls(join(opts.turnDir(t), 'agent', CALLS_FILE))).flat();
  const spent = usageOfCalls(earlier);
  let fire: () => void = () => undefined;
  const stop = new Promise<void>((resolve) => { fire = resolve; });
  const limits = opts.input.limits ?? {};
  const scope = gateway.register({
    label: `${opts.runKey}`,
    upstreams: training ? {} : { [provider]: upstreamOf(provider) },
    ...(training && opts.training ? { training: opts.training } : {}),
    prices: loadBerthConfig().config.gateway.prices,
    limits,
    spentBefore: { tokens: spent.promptTokens + spent.completionTokens, costUsd: spent.costUsd ?? 0 },
    previousCalls: readCalls(file),
    onCall: (call) => { void appendFile(file, `${JSON.stringify(call)}\n`); },
    onLimit: () => fire(),
  }, tokenFor(opts.runKey));
  if (scope.stopped) fire();
  return {
    access: { gatewayUrl: opts.gatewayUrl ?? gateway.url, token: scope.token, model, provider },
    scope,
    stop,
    close: () => {
      gateway.revoke(scope.token);
      scope.opts.training?.policy.release();
      const usage = usageOfCalls(scope.calls);
      const why = scope.stopped ?? (scope.contextOverflow ? { kind: 'context_length', reason: scope.contextOverflow } : null);
      return { usage, ...(why ? { agentOutcome: { kind: `agent:${why.kind}`, reason: why.reason } } : {}) };
    },
  };
}
