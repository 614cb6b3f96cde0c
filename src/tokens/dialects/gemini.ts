// Gemini generateContent (gemini-cli) to Chat Completions and back: systemInstruction becomes a system message,
// functionCall parts an assistant's tool_calls, functionResponse parts tool messages. Gemini's calls carry no id
// (or an optional one): a missing id is made from the call's place in the conversation, so the same history always
// gives the same ids. A streamed answer (streamGenerateContent) is one chunk: JSON array, or SSE with alt=sse.
import {
  argumentsObject, arr, DialectError, obj, sseFrame, str, num, type ChatAnswer, type ChatMessage, type ChatRequest, type ChatTool, type Json,
} from './chat.ts';

function partsText(parts: Json[]): string {
  for (const p of parts) if (p['inlineData'] !== undefined || p['fileData'] !== undefined) throw new DialectError('an inline or file data part cannot be sent to a text policy');
  return parts.filter((p) => typeof p['text'] === 'string' && p['thought'] !== true).map((p) => p['text'] as string).join('');
}

function messagesOf(contents: unknown): ChatMessage[] {
  const out: ChatMessage[] = [];
  const pending: string[] = [];
  arr(contents).map(obj).forEach((c, ci) => {
    const parts = arr(c['parts']).map(obj);
    if (c['role'] === 'model') {
      const calls = parts.filter((p) => p['functionCall'] !== undefined).map((p, pi) => {
        const call = obj(p['functionCall']);
        return { id: str(call['id']) ?? `call_${ci}_${pi}`, type: 'function' as const, function: { name: str(call['name']) ?? '', arguments: JSON.stringify(call['args'] ?? {}) } };
      });
      pending.splice(0, pending.length, ...calls.map((t) => t.id));
      const text = partsText(parts);
      out.push({ role: 'assistant', content: text === '' && calls.length ? null : text, ...(calls.length ? { tool_calls: calls } : {}) });
      return;
    }
    parts.filter((p) => p['functionResponse'] !== undefined).forEach((p, i) => {
      const r = obj(p['functionResponse']);
      out.push({ role: 'tool', tool_call_id: str(r['id']) ?? pending[i] ?? `call_${ci}_${i}`, content: JSON.stringify(r['response'] ?? {}) });
    });
    const text = partsText(parts.filter((p) => p['functionResponse'] === undefined));
    if (text !== '' || parts.every((p) => p['functionResponse'] === undefined)) out.push({ role: 'user', content: text });
  });
  return out;
}

export function chatRequestOfGemini(body: Json): ChatRequest {
  if (!Array.isArray(body['contents'])) throw new DialectError('the request has no contents array');
  const system = body['systemInstruction'] ?? body['system_instruction'];
  const systemText = system === undefined ? '' : typeof system === 'string' ? system : partsText(arr(obj(system)['parts']).map(obj));
  const tools: ChatTool[] = arr(body['tools']).flatMap((t) => arr(obj(t)['functionDeclarations'])).map(obj).map((d) => ({
    type: 'function', function: { name: str(d['name']) ?? '', ...(str(d['description']) ? { description: str(d['description'])! } : {}), parameters: d['parametersJsonSchema'] ?? d['parameters'] },
  }));
  const config = obj(body['generationConfig']);
  const stop = arr(config['stopSequences']).filter((s): s is string => typeof s === 'string');
  const sampling: Partial<ChatRequest> = {};
  if (num(config['maxOutputTokens']) !== undefined) sampling.max_tokens = num(config['maxOutputTokens'])!;
  if (num(config['temperature']) !== undefined) sampling.temperature = num(config['temperature'])!;
  if (num(config['topP']) !== undefined) sampling.top_p = num(config['topP'])!;
  return {
    messages: [...(systemText ? [{ role: 'system' as const, content: systemText }] : []), ...messagesOf(body['contents'])],
    ...(tools.length ? { tools } : {}), ...sampling, ...(stop.length ? { stop } : {}),
  };
}

const FINISH: Record<string, string> = { stop: 'STOP', tool_calls: 'STOP', length: 'MAX_TOKENS' };

export function geminiAnswer(a: ChatAnswer): Json {
  const parts: Json[] = a.content ? [{ text: a.content }] : [];
  for (const t of a.toolCalls) parts.push({ functionCall: { name: t.function.name, args: argumentsObject(t.function.arguments) } });
  return {
    candidates: [{ content: { role: 'model', parts }, finishReason: FINISH[a.finishReason] ?? 'OTHER', index: 0 }],
    usageMetadata: { promptTokenCount: a.promptTokens, candidatesTokenCount: a.completionTokens, totalTokenCount: a.promptTokens + a.completionTokens },
    modelVersion: a.model, responseId: a.id,
  };
}

export const geminiEvents = (a: ChatAnswer): string[] => [sseFrame(geminiAnswer(a))];
