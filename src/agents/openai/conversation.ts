// The conversation of one openai turn lives in a JSONL file on the host (one ConversationRecord a line), never in
// the caller's memory across calls: every piece reads the file, and appends to it.
import { existsSync } from 'node:fs';
import { mkdir, open, readFile, truncate } from 'node:fs/promises';
import { dirname } from 'node:path';
import { toolCallsOf } from './tool-calls.ts';
import type { ChatMessage, ConversationRecord, ToolCall } from './types.ts';

/**
 * Reads every complete record. A last line cut short by a crash (no newline, not JSON) is ignored; the
 * next append removes it.
 */
export async function readConversation(path: string): Promise<ConversationRecord[]> {
  if (!existsSync(path)) return [];
  const text = await readFile(path, 'utf8');
  const lines = text.split('\n');
  // The piece after the last newline is '' or an unfinished record.
  const complete = lines.slice(0, -1);
  return complete.filter((l) => l.trim() !== '').map((l, i) => {
    try {
      return JSON.parse(l) as ConversationRecord;
    } catch {
      throw new Error(`${path}: line ${i + 1} is not JSON; the conversation file is damaged (remove it to start the turn afresh)`);
    }
  });
}

/** Drops a partial last line left by a crash mid-write, so the next record starts on its own line. */
async function dropPartialLine(path: string): Promise<void> {
  if (!existsSync(path)) return;
  const text = await readFile(path);
  if (text.length === 0 || text[text.length - 1] === 0x0a) return;
  const lastNewline = text.lastIndexOf(0x0a);
  await truncate(path, lastNewline + 1);
}

export async function appendRecord(path: string, record: Omit<ConversationRecord, 'at'> & { at?: string }): Promise<ConversationRecord> {
  const full: ConversationRecord = { ...record, at: record.at ?? new Date().toISOString() };
  await mkdir(dirname(path), { recursive: true });
  await dropPartialLine(path);
  const fh = await open(path, 'a');
  try {
    await fh.write(`${JSON.stringify(full)}\n`);
    await fh.sync();
  } finally {
    await fh.close();
  }
  return full;
}

/** Writes the opening messages unless the file already holds a conversation (a retried start is a no-op). */
export async function startConversation(path: string, opening: { instruction: string; system?: string }): Promise<void> {
  if ((await readConversation(path)).length > 0) return;
  if (opening.system) await appendRecord(path, { message: { role: 'system', content: opening.system } });
  await appendRecord(path, { message: { role: 'user', content: opening.instruction } });
}

/** The messages to send: exactly what the model and the tools said, without Berth's bookkeeping. */
export function messagesOf(records: readonly ConversationRecord[]): ChatMessage[] {
  return records.map((r) => r.message);
}

export function toolResultFor(records: readonly ConversationRecord[], toolCallId: string): ConversationRecord | undefined {
  return records.find((r) => r.message.role === 'tool' && r.message.tool_call_id === toolCallId);
}

/**
 * Tool calls of the last assistant message that have no result in the file yet: run these before calling
 * the model again (a request with an unanswered tool call is refused by the endpoint).
 */
export function pendingToolCalls(records: readonly ConversationRecord[]): ToolCall[] {
  const last = lastAssistant(records);
  if (!last) return [];
  return toolCallsOf(last.message).filter((c) => toolResultFor(records, c.id) === undefined);
}

export function lastAssistant(records: readonly ConversationRecord[]): (ConversationRecord & { message: Extract<ChatMessage, { role: 'assistant' }> }) | undefined {
  for (let i = records.length - 1; i >= 0; i--) {
    const r = records[i]!;
    if (r.message.role === 'assistant') return r as ConversationRecord & { message: Extract<ChatMessage, { role: 'assistant' }> };
  }
  return undefined;
}

