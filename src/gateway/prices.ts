// Cost of a call from berth.toml [gateway.prices] (USD per million tokens). Cached input tokens cost
// `cached_input` when the table gives it, else `input`. A model without a price costs null (unknown), not 0.
import type { CallUsage } from './usage.ts';

export interface Price {
  input: number;
  cached_input?: number;
  output: number;
}

export type PriceTable = Readonly<Record<string, Price>>;

/** The table's entry for `provider/model`, else for the bare model name. */
export function priceOf(table: PriceTable, provider: string, model: string): Price | null {
  return table[`${provider}/${model}`] ?? table[model] ?? null;
}

export function costOf(price: Price | null, usage: CallUsage): number | null {
  if (!price) return null;
  const cached = Math.min(usage.cachedInputTokens, usage.inputTokens);
  const usd = ((usage.inputTokens - cached) * price.input + cached * (price.cached_input ?? price.input) + usage.outputTokens * price.output) / 1e6;
  return Math.round(usd * 1e8) / 1e8;
}
