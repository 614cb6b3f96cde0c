// Pieces the installed agents' log converters share.
import { agentStep, buildTrajectory, userStep, type AgentStepInput, type StepInput, type ToolCallInput } from '../../trajectory/atif.ts';
import type { AgentTranscript } from './types.ts';

export type Json = Record<string, unknown>;

/** The JSON objects of a JSON-lines log; lines that are not JSON objects (banners, warnings) are skipped. */
export function jsonLines(text: string): Json[] {
  const out: Json[] = [];
  for (const line of text.split('\n')) {
    const t = line.trim();
    if (!t.startsWith('{')) continue;
    try {
      const v = JSON.parse(t) as unknown;
      if (typeof v === 'object' && v !== null) out.push(v as Json);
    } catch {
      // a partial last line of a killed process
    }
  }
  return out;
}

export const str = (v: unknown): string => (typeof v === 'string' ? v : v === undefined || v === null ? '' : JSON.stringify(v));
export const obj = (v: unknown): Json => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Json) : {});
export const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

/** An agent step made by one model answer: its text and its tool calls (with their results when known). */
export interface AnswerStep {
  text: string;
  toolCalls: ToolCallInput[];
  reasoning?: string;
  timestamp?: string;
}

export function transcriptOf(opts: {
  sessionId: string; agent: string; version: string; model: string; instruction: string; answers: AnswerStep[]; notes?: string;
}): AgentTranscript {
  const steps: StepInput[] = [userStep(opts.instruction)];
  for (const a of opts.answers) {
    const step: Omit<AgentStepInput, 'source'> = {
      message: a.text, modelName: opts.model, toolCalls: a.toolCalls, llmCallCount: 1,
      ...(a.reasoning ? { reasoningContent: a.reasoning } : {}), ...(a.timestamp ? { timestamp: a.timestamp } : {}),
    };
    steps.push(agentStep(step));
  }
  const lastText = [...opts.answers].reverse().find((a) => a.text.trim() !== '')?.text ?? '';
  return {
    trajectory: buildTrajectory({
      sessionId: opts.sessionId, agent: { name: opts.agent, version: opts.version, model_name: opts.model }, steps,
      ...(opts.notes ? { notes: opts.notes } : {}),
    }),
    responseText: lastText,
  };
}
