// One policy call's training data, as the gateway writes it beside an episode's logs (one JSON line per call).
// Field names follow NeMo Gym 0.7.0's `TokenEntry` (nemo_gym/token_id_capture/records.py, schema_version 1), so a
// NeMo RL reader takes the lines as they are; Berth's extras (policy versions, timing, dialect) sit beside them,
// which that schema allows (extra="allow").
import { createHash } from 'node:crypto';

export const TOKEN_RECORDS_FILE = 'token-records.jsonl';
export const TOKEN_RECORD_SCHEMA_VERSION = 1;

/** The wire format an agent spoke to the gateway (the gateway's `Protocol`). */
export type Dialect = 'openai-chat' | 'openai-responses' | 'anthropic-messages' | 'gemini-generate';

export type ParentResolution = 'root' | 'resolved' | 'unresolved';

export interface TokenRecord {
  schema_version: number;
  rollout_id: string;
  model_call_id: string;
  model: string;
  prompt_token_ids: number[];
  generation_token_ids: number[];
  generation_log_probs: number[];
  /** The assistant's message as Chat Completions gave it, without token arrays. */
  output_items: Array<Record<string, unknown>>;
  /**
   * What this call's prompt added after the last assistant message, in Chat form: the tool outputs it answers and
   * any user turn (the whole prompt for an episode's first call). A NeMo Gym verify response lists them as
   * `function_call_output` and input messages before this call's message.
   */
  input_items?: Array<Record<string, unknown>>;
  token_item_index: number | null;
  response_id: string | null;
  /** Seconds since the epoch, as NeMo Gym stamps it. */
  created_at: number;
  parent_call_id: string | null;
  parent_resolution: ParentResolution | null;
  cum_len: number;
  digest: string;
  /** The policy version in force when the call was sent to the engine. */
  policy_version: number;
  /** The version in force when the answer ended: a different one means the call crossed a weight swap. */
  policy_version_end: number;
  finish_reason: string | null;
  dialect: Dialect;
  stream: boolean;
  timing: { started_at: string; held_ms: number; engine_ms: number; total_ms: number };
  /** The agent turn (0-based) whose scope made the call. */
  turn: number;
  /** Why the engine's answer gave no usable tokens (the arrays are then empty); null when captured. */
  capture_error: string | null;
}

/**
 * NeMo Gym's `compute_digest`: sha256 over "nemo-gym-tokens", a version byte, the length as a big-endian u64, then each
 * id as a big-endian u64. The empty sequence hashes the domain alone.
 */
export function tokenDigest(ids: readonly number[]): string {
  const h = createHash('sha256').update('nemo-gym-tokens');
  if (ids.length === 0) return h.digest('hex');
  const buf = Buffer.alloc(9 + 8 * ids.length);
  buf.writeUInt8(1, 0);
  buf.writeBigUInt64BE(BigInt(ids.length), 1);
  ids.forEach((id, i) => {
    if (!Number.isInteger(id) || id < 0 || id > 0xffffffff) throw new Error(`token ids must be non-negative integers below 2^32, got ${id}`);
    // The u64's high half is zero (Buffer.alloc): only the low half is written, without a BigInt per token.
    buf.writeUInt32BE(id, 13 + 8 * i);
  });
  return h.update(buf).digest('hex');
}

/** The record's prompt and generation, the sequence a later call must start with to extend it. */
export const cumulativeOf = (r: Pick<TokenRecord, 'prompt_token_ids' | 'generation_token_ids'>): number[] =>
  [...r.prompt_token_ids, ...r.generation_token_ids];

/** A file's records, skipping a torn last line (the file is appended as calls end). */
export function parseTokenRecords(text: string): TokenRecord[] {
  return text.split('\n').filter((l) => l.trim() !== '').flatMap((l) => {
    try {
      return [JSON.parse(l) as TokenRecord];
    } catch {
      return [];
    }
  });
}

/** The messages after the last assistant message (all of them when there is none), as the record keeps them. */
export function inputItemsOf(messages: ReadonlyArray<{ role: string; content: unknown; tool_call_id?: string }>): Array<Record<string, unknown>> {
  let last = -1;
  messages.forEach((m, i) => { if (m.role === 'assistant') last = i; });
  return messages.slice(last + 1).map((m) => ({ role: m.role, content: m.content, ...(m.tool_call_id !== undefined ? { tool_call_id: m.tool_call_id } : {}) }));
}
