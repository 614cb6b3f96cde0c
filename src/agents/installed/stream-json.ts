// gemini-cli's `-o stream-json` events as ATIF: `message` (the user's, then the assistant's text in deltas),
// `tool_use` and `tool_result` (paired by tool_id), `error`, and a closing `result`. One agent step per model
// answer: text and the tool calls that follow it, until the next answer's text after a tool result.
import { jsonLines, obj, str, transcriptOf, type AnswerStep } from './transcript-parts.ts';
import type { AgentTranscript } from './types.ts';

export function streamJsonTranscript(opts: { stdout: string; sessionId: string; instruction: string; model: string; agent: string; version: string }): AgentTranscript {
  const answers: AnswerStep[] = [];
  const calls = new Map<string, AnswerStep['toolCalls'][number]>();
  const notes: string[] = [];
  let step: AnswerStep | null = null;
  let sawResult = false;
  const current = (timestamp: unknown): AnswerStep => {
    if (!step || sawResult) {
      step = { text: '', toolCalls: [], ...(typeof timestamp === 'string' ? { timestamp } : {}) };
      answers.push(step);
      sawResult = false;
    }
    return step;
  };
  for (const e of jsonLines(opts.stdout)) {
    if (e['type'] === 'message' && e['role'] === 'assistant') current(e['timestamp']).text += str(e['content']);
    else if (e['type'] === 'tool_use') {
      const call = { id: str(e['tool_id']), name: str(e['tool_name']), arguments: obj(e['parameters']) };
      current(e['timestamp']).toolCalls.push(call);
      calls.set(call.id, call);
    } else if (e['type'] === 'tool_result') {
      const call = calls.get(str(e['tool_id']));
      if (call) call.output = str(e['output'] ?? obj(e['error'])['message']);
      sawResult = true;
    } else if (e['type'] === 'error') notes.push(str(e['message']));
    else if (e['type'] === 'result' && e['status'] !== 'success') notes.push(str(obj(e['error'])['message']) || `result: ${str(e['status'])}`);
  }
  return transcriptOf({ ...opts, answers, ...(notes.length ? { notes: notes.join('\n') } : {}) });
}
