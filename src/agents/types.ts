// The one interface every harness implements. An activity builds the context, calls runTurn, and keeps
// the result (small: long output stays in files under logsDir and /logs/agent).
import type { SandboxHandle, SandboxProvider } from '../sandbox/index.ts';
import type { Task } from '../task/index.ts';
import type { AtifTrajectory } from '../trajectory/atif.ts';
import type { Provider } from '../gateway/index.ts';
import type { InstalledAgentName } from './installed/types.ts';

export type HarnessName = 'oracle' | 'nop' | 'command' | 'openai' | InstalledAgentName;

/** How an agent in the sandbox reaches its model: the worker's gateway and this episode's token (never a key). */
export interface ModelAccess {
  /** As the sandbox reaches it, without /v1. */
  gatewayUrl: string;
  token: string;
  /** Without the provider prefix. */
  model: string;
  provider: Provider;
}

export interface AgentTurnContext {
  provider: SandboxProvider;
  handle: SandboxHandle;
  task: Task;
  /** 0 for a single-step task. */
  stepIndex: number;
  /** This turn's text: the step's own instruction for a multi-step task, never the top-level one. */
  instruction: string;
  /** The agent user and working directory in effect for this turn. */
  user: string;
  workdir: string;
  /** Already templated. */
  env: Record<string, string>;
  /** The turn's budget in seconds. */
  timeoutSec: number;
  /** Unique per (workflow run, turn), e.g. `${runId}-t1`; keys the detached markers. */
  runKey: string;
  /** Host folder for this turn's agent logs; exists. */
  logsDir: string;
  /** --agent-arg KEY=VALUE */
  args: Record<string, string>;
  heartbeat: (details?: unknown) => void;
  signal?: AbortSignal;
  /** Installed agents: the gateway and the episode's token. */
  model?: ModelAccess;
  /** Resolves when the turn must end now (a token or cost limit passed): the agent's processes are stopped. */
  stop?: Promise<unknown>;
  /**
   * Training mode: how long the gateway has held this turn's model calls while the trainer drained. The turn's budget
   * is moved on by it, so a detached agent's limit is kept from outside (moving-deadline.ts).
   */
  heldMs?: () => number;
}

export interface TokenUsage {
  /** Every input token, cached ones included. */
  promptTokens: number;
  completionTokens: number;
  calls: number;
  cachedTokens?: number;
  /** Absent when a model has no price in berth.toml [gateway.prices]. */
  costUsd?: number;
}

export interface AgentTurnResult {
  responseText: string;
  /** The agent process's exit code; null when no process ran (nop, a missing solution, a model loop). */
  exitCode: number | null;
  timedOut: boolean;
  trajectory: AtifTrajectory;
  /** Seconds per phase. */
  timings: Record<string, number>;
  usage?: TokenUsage;
  /** Oracle only: this turn (or the task) has no reference solution; nothing ran. */
  missingSolution?: boolean;
  /** openai only: the loop stopped because the per-turn call limit was reached. */
  callLimitReached?: boolean;
}

export interface AgentHarness {
  name: HarnessName;
  runTurn(ctx: AgentTurnContext): Promise<AgentTurnResult>;
}
