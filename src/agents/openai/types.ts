// Chat Completions shapes (the subset Berth sends and reads) and the records of a conversation file.

export interface ChatToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

export type ChatMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string }
  | { role: 'assistant'; content: string | null; tool_calls?: ChatToolCall[] }
  | { role: 'tool'; tool_call_id: string; content: string };

export interface ModelUsage {
  promptTokens: number;
  completionTokens: number;
}

/** One line of a conversation file. Only `message` is ever sent back to the model. */
export interface ConversationRecord {
  message: ChatMessage;
  /** ISO-8601 time the record was written. */
  at: string;
  /** Assistant records: what the endpoint reported. */
  usage?: ModelUsage;
  finish_reason?: string;
  model?: string;
  reasoning?: string;
  /** Tool records: how the command ended. */
  exit_code?: number;
  timed_out?: boolean;
}

/** A tool call as the harness uses it: arguments parsed from the model's JSON text. */
export interface ToolCall {
  id: string;
  name: string;
  arguments: Record<string, unknown>;
  /** Set when the model's arguments were not a JSON object; `arguments` is then {}. */
  argumentsError?: string;
}
