// Tool calls as the harness uses them: the model's JSON argument text parsed into an object.
import type { ChatMessage, ToolCall } from './types.ts';

function parseArguments(raw: string): { args: Record<string, unknown>; error?: string } {
  if (raw.trim() === '') return { args: {} };
  try {
    const v: unknown = JSON.parse(raw);
    if (typeof v === 'object' && v !== null && !Array.isArray(v)) return { args: v as Record<string, unknown> };
    return { args: {}, error: 'the arguments are JSON but not an object' };
  } catch {
    return { args: {}, error: 'the arguments are not valid JSON' };
  }
}

export function toolCallsOf(message: Extract<ChatMessage, { role: 'assistant' }>): ToolCall[] {
  return (message.tool_calls ?? []).map((c) => {
    const { args, error } = parseArguments(c.function.arguments);
    return { id: c.id, name: c.function.name, arguments: args, ...(error ? { argumentsError: error } : {}) };
  });
}

