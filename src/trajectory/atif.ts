// Building ATIF v1.7 trajectories (the transcript at /logs/agent/trajectory.json) and the oracle's transcript
// (docs/design.md section 7 "Formats": a user step with the instruction, an agent step with the command and its output).
// Types are in atif-types.ts and the validator in atif-validate.ts; both are re-exported here.

import {
  ATIF_SCHEMA_VERSION,
  type AtifAgent,
  type AtifContentPart,
  type AtifExtra,
  type AtifFinalMetrics,
  type AtifMetrics,
  type AtifObservationResult,
  type AtifStep,
  type AtifToolCall,
  type AtifTrajectory,
} from './atif-types.ts';

export * from './atif-types.ts';
export { validateAtif, type AtifValidation } from './atif-validate.ts';

type Message = string | AtifContentPart[];

export interface ToolCallInput {
  /** Defaults to `call_<step id>_<index>`. */
  id?: string;
  name: string;
  arguments?: Record<string, unknown>;
  /** What the tool returned; becomes an observation result pointing at this call. Omit for no result. */
  output?: string | AtifContentPart[] | null;
  extra?: AtifExtra;
}

interface CommonStepInput {
  message: Message;
  timestamp?: string | Date;
  isCopiedContext?: boolean;
  extra?: AtifExtra;
}

export interface UserOrSystemStepInput extends CommonStepInput {
  source: 'user' | 'system';
}

export interface AgentStepInput extends CommonStepInput {
  source: 'agent';
  modelName?: string;
  reasoningContent?: string;
  reasoningEffort?: string | number;
  toolCalls?: ToolCallInput[];
  /** Observation results not tied to a tool call of this step. */
  observations?: AtifObservationResult[];
  metrics?: AtifMetrics;
  /** 0 for a step no model produced (a scripted command); such a step may carry no metrics. */
  llmCallCount?: number;
}

export type StepInput = UserOrSystemStepInput | AgentStepInput;

export function userStep(message: Message, opts: Omit<CommonStepInput, 'message'> = {}): UserOrSystemStepInput {
  return { source: 'user', message, ...opts };
}

export function systemStep(message: Message, opts: Omit<CommonStepInput, 'message'> = {}): UserOrSystemStepInput {
  return { source: 'system', message, ...opts };
}

export function agentStep(input: Omit<AgentStepInput, 'source'>): AgentStepInput {
  return { source: 'agent', ...input };
}

function timestampOf(t: string | Date | undefined): string | undefined {
  return t instanceof Date ? t.toISOString() : t;
}

/** Drops undefined values so the JSON holds only the fields that are set. */
function compact<T extends object>(obj: T): T {
  return Object.fromEntries(Object.entries(obj).filter(([, v]) => v !== undefined)) as T;
}

export function toAtifStep(input: StepInput, stepId: number): AtifStep {
  const common = {
    step_id: stepId,
    source: input.source,
    message: input.message,
    timestamp: timestampOf(input.timestamp),
    is_copied_context: input.isCopiedContext,
    extra: input.extra,
  };
  if (input.source !== 'agent') return compact<AtifStep>(common);

  const calls = input.toolCalls ?? [];
  const toolCalls: AtifToolCall[] = [];
  const results: AtifObservationResult[] = [];
  calls.forEach((call, k) => {
    const id = call.id ?? `call_${stepId}_${k + 1}`;
    toolCalls.push(compact({ tool_call_id: id, function_name: call.name, arguments: call.arguments ?? {}, extra: call.extra }));
    if (call.output !== undefined) results.push({ source_call_id: id, content: call.output });
  });
  results.push(...(input.observations ?? []));
  return compact<AtifStep>({
    ...common,
    model_name: input.modelName,
    reasoning_effort: input.reasoningEffort,
    reasoning_content: input.reasoningContent,
    tool_calls: toolCalls.length > 0 ? toolCalls : undefined,
    observation: results.length > 0 ? { results } : undefined,
    metrics: input.metrics,
    llm_call_count: input.llmCallCount,
  });
}

/** Totals over the steps' metrics; a total appears only when some step reported that metric. */
export function finalMetricsOf(steps: readonly AtifStep[]): AtifFinalMetrics {
  const sum = (key: 'prompt_tokens' | 'completion_tokens' | 'cached_tokens' | 'cost_usd'): number | undefined => {
    const values = steps.map((s) => s.metrics?.[key]).filter((v): v is number => v !== undefined);
    return values.length === 0 ? undefined : values.reduce((a, b) => a + b, 0);
  };
  return compact({
    total_prompt_tokens: sum('prompt_tokens'),
    total_completion_tokens: sum('completion_tokens'),
    total_cached_tokens: sum('cached_tokens'),
    total_cost_usd: sum('cost_usd'),
    total_steps: steps.length,
  });
}

export interface TrajectoryInput {
  sessionId: string;
  agent: AtifAgent;
  steps: readonly StepInput[];
  trajectoryId?: string;
  notes?: string;
  extra?: AtifExtra;
  /** Merged over the totals computed from the steps. */
  finalMetrics?: AtifFinalMetrics;
}

/** A v1.7 trajectory with step ids assigned in order and final metrics totalled from the steps. */
export function buildTrajectory(input: TrajectoryInput): AtifTrajectory {
  const steps = input.steps.map((s, i) => toAtifStep(s, i + 1));
  return compact<AtifTrajectory>({
    schema_version: ATIF_SCHEMA_VERSION,
    session_id: input.sessionId,
    trajectory_id: input.trajectoryId,
    agent: compact(input.agent),
    steps,
    notes: input.notes,
    final_metrics: { ...finalMetricsOf(steps), ...input.finalMetrics },
    extra: input.extra,
  });
}

/** Collects steps as an agent runs, for harnesses that write the transcript as they go. */
export class TrajectoryBuilder {
  private readonly steps: StepInput[] = [];

  constructor(
    private readonly sessionId: string,
    private readonly agent: AtifAgent,
  ) {}

  add(step: StepInput): this {
    this.steps.push(step);
    return this;
  }

  user(message: Message, opts?: Omit<CommonStepInput, 'message'>): this {
    return this.add(userStep(message, opts));
  }

  system(message: Message, opts?: Omit<CommonStepInput, 'message'>): this {
    return this.add(systemStep(message, opts));
  }

  agentTurn(input: Omit<AgentStepInput, 'source'>): this {
    return this.add(agentStep(input));
  }

  get length(): number {
    return this.steps.length;
  }

  build(opts: Omit<TrajectoryInput, 'sessionId' | 'agent' | 'steps'> = {}): AtifTrajectory {
    return buildTrajectory({ ...opts, sessionId: this.sessionId, agent: this.agent, steps: this.steps });
  }
}

export interface OracleTranscriptInput {
  sessionId: string;
  instruction: string;
  /** The command the oracle ran, e.g. `/solution/solve.sh`. */
  command: string;
  /** Its combined output (oracle.txt); the caller bounds its size. */
  output: string;
  exitCode?: number;
  agentVersion?: string;
  startedAt?: string | Date;
  finishedAt?: string | Date;
}

export const ORACLE_AGENT_NAME = 'oracle';
export const ORACLE_TOOL_NAME = 'bash';

/** The oracle's transcript: the instruction as a user step, then one scripted agent step that ran the
 * reference solution, with its output as the observation. No model took part, so llm_call_count is 0. */
export function oracleTrajectory(input: OracleTranscriptInput): AtifTrajectory {
  const extra = input.exitCode === undefined ? undefined : { exit_code: input.exitCode };
  return buildTrajectory({
    sessionId: input.sessionId,
    agent: { name: ORACLE_AGENT_NAME, version: input.agentVersion ?? '1.0.0' },
    steps: [
      userStep(input.instruction, { timestamp: input.startedAt }),
      agentStep({
        message: `Running the reference solution: ${input.command}`,
        timestamp: input.finishedAt,
        llmCallCount: 0,
        toolCalls: [{ id: 'oracle_solve', name: ORACLE_TOOL_NAME, arguments: { command: input.command }, output: input.output }],
        extra,
      }),
    ],
  });
}
