// Where the gateway forwards each provider's calls, and the real key it adds: from the worker's environment,
// else berth.toml [secrets]. The key never leaves the worker process.

export type Provider = 'anthropic' | 'openai' | 'google';
export const PROVIDERS: readonly Provider[] = ['anthropic', 'openai', 'google'];

export interface Upstream {
  provider: Provider;
  /** Without a trailing /v1: the gateway appends the path it was called on (/v1/...). */
  baseUrl: string;
  apiKey: string | null;
}

const DEFAULTS: Record<Provider, { baseUrl: string; keyVar: string; urlVar: string }> = {
  anthropic: { baseUrl: 'https://api.anthropic.com', keyVar: 'ANTHROPIC_API_KEY', urlVar: 'ANTHROPIC_BASE_URL' },
  openai: { baseUrl: 'https://api.openai.com/v1', keyVar: 'OPENAI_API_KEY', urlVar: 'OPENAI_BASE_URL' },
  // The variables Google's own clients (gemini-cli, @google/genai) read.
  google: { baseUrl: 'https://generativelanguage.googleapis.com', keyVar: 'GEMINI_API_KEY', urlVar: 'GOOGLE_GEMINI_BASE_URL' },
};

export function keyVariableOf(provider: Provider): string {
  return DEFAULTS[provider].keyVar;
}

/** `https://x/v1/` and `https://x` both become `https://x`: the incoming path brings its own /v1 (or Gemini's /v1beta). */
export function normaliseBase(url: string): string {
  return url.replace(/\/+$/, '').replace(/\/v1(beta)?$/, '');
}

export function upstreamFor(
  provider: Provider,
  env: Readonly<Record<string, string | undefined>>,
  secrets: Readonly<Record<string, string>> = {},
  override?: { baseUrl?: string; keyVar?: string },
): Upstream {
  const d = DEFAULTS[provider];
  const keyVar = override?.keyVar ?? d.keyVar;
  const baseUrl = override?.baseUrl ?? env[d.urlVar] ?? secrets[d.urlVar] ?? d.baseUrl;
  const apiKey = env[keyVar] || secrets[keyVar] || null;
  return { provider, baseUrl: normaliseBase(baseUrl), apiKey };
}

/** `anthropic/claude-x` → provider and model id; a bare name belongs to `fallback`. */
export function splitModel(spec: string, fallback: Provider): { provider: Provider; model: string } {
  const at = spec.indexOf('/');
  const head = at > 0 ? spec.slice(0, at) : '';
  if ((PROVIDERS as readonly string[]).includes(head)) return { provider: head as Provider, model: spec.slice(at + 1) };
  return { provider: fallback, model: spec };
}
