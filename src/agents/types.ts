// The one interface every harness implements. An activity builds the context, calls runTurn, and keeps
// the result (small: long output stays in files under logsDir and /logs/agent).
import type { SandboxHandle, SandboxProvider } from '../sandbox/index.ts';
import type { Task } from '../task/index.ts';
import type { AtifTrajectory } from '../verify/atif.ts';

export type HarnessName = 'oracle' | 'nop' | 'command' | 'openai';

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
}

export interface TokenUsage {
  promptTokens: number;
  completionTokens: number;
  calls: number;
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
