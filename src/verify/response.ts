// The agent's final answer as a Responses-API-shaped object (docs/design.md section 7 "Formats"), the shape a Python
// verifier's `response` argument and the row's `response` field have. `responseText` mirrors the shim's
// `final_text` helper (src/verify/shim/nemo_gym/verifiers/__init__.py): keep the two in step.

export interface OutputText {
  type: 'output_text';
  text: string;
}

export interface AssistantMessage {
  type: 'message';
  role: 'assistant';
  content: OutputText[];
}

export interface AgentResponse {
  output: AssistantMessage[];
}

export function responseFromText(text: string): AgentResponse {
  return { output: [{ type: 'message', role: 'assistant', content: [{ type: 'output_text', text }] }] };
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function messageText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .filter((part): part is Record<string, unknown> => isRecord(part) && part['type'] === 'output_text')
    .map((part) => (typeof part['text'] === 'string' ? part['text'] : ''))
    .join('');
}

/**
 * The text of the last assistant message of a response (its output_text parts joined), or '' when there is
 * none. Takes `unknown` because responses are read back from files and workflow payloads.
 */
export function responseText(response: unknown): string {
  if (!isRecord(response) || !Array.isArray(response['output'])) return '';
  const output = response['output'] as unknown[];
  for (let i = output.length - 1; i >= 0; i--) {
    const item = output[i];
    if (!isRecord(item) || item['role'] !== 'assistant') continue;
    if (item['type'] !== undefined && item['type'] !== 'message') continue;
    return messageText(item['content']);
  }
  return '';
}
