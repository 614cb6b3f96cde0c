// The policy endpoint's check before a training run (src/tokens/probe.ts says what is checked).
import { classifyPolicyProbe, probeRequest, PROBE_TEMPERATURES, type PolicyProbe } from '../tokens/index.ts';

export async function probePolicyEndpoint(endpoint: string, model: string, apiKey?: string | null): Promise<PolicyProbe> {
  const url = `${endpoint.replace(/\/+$/, '').replace(/\/v1$/, '')}/v1/chat/completions`;
  const headers: Record<string, string> = { 'content-type': 'application/json', ...(apiKey ? { authorization: `Bearer ${apiKey}` } : {}) };
  try {
    const [at1, atHalf] = await Promise.all(PROBE_TEMPERATURES.map(async (t) => {
      const res = await fetch(url, { method: 'POST', headers, body: JSON.stringify(probeRequest(model, t)), signal: AbortSignal.timeout(120_000) });
      const text = await res.text();
      let body: unknown = text;
      try {
        body = JSON.parse(text);
      } catch {
        // kept as text for the message
      }
      return { status: res.status, body };
    }));
    return classifyPolicyProbe(url, at1!, atHalf!);
  } catch (err) {
    return { ok: false, reason: `the policy endpoint ${url} did not answer: ${(err as Error).message}` };
  }
}
