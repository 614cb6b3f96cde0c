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
  /** Assistant records of a durable turn: what the gateway counted for the call (absent without a gateway). */
  gateway?: GatewayCallNote;
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

/** What the gateway counted for one model call, kept beside its answer so a resumed turn counts it once. */
export interface GatewayCallNote {
  cached_tokens?: number;
  cost_usd?: number;
  /** How long a trainer's drain held the call before it was sent. */
  held_ms?: number;
  /** The call took the episode past --max-tokens or --max-cost: the turn ends here. */
  limit?: { kind: string; reason: string };
}
