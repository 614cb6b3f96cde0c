// An episode's policy calls linked into token sequences by exact token prefix: a call whose prompt starts with the
// whole of an open sequence (the previous call's prompt and completion, then tool output) extends it; the delta
// between them is prompt (loss mask 0), the call's generation is the policy's (loss mask 1). Nothing is guessed:
// a call that extends no open sequence (a subagent, a retried call, a rewritten history) starts its own sequence
// or is dropped (`unextended`), and a lineage that cannot be resolved (a call without tokens, or a prompt that
// extends two identical sequences) masks the rollout or splits it there (`broken`).
import type { ParentResolution, TokenRecord } from './records.ts';

export type UnextendedCall = 'split' | 'drop';
export type BrokenLineage = 'mask' | 'split';

export interface LinkSettings {
  unextended: UnextendedCall;
  broken: BrokenLineage;
}

export const DEFAULT_LINK_SETTINGS: LinkSettings = { unextended: 'split', broken: 'mask' };

export interface SequenceSpan {
  call_id: string;
  /** Where the call's new prompt tokens start (its delta), where its generation starts, and the end. */
  prompt_start: number;
  generation_start: number;
  end: number;
}

export interface TokenSequence {
  call_ids: string[];
  token_ids: number[];
  /** The generation's logprob where loss_mask is 1, else 0. */
  logprobs: number[];
  loss_mask: Array<0 | 1>;
  /** Per call, in order. */
  policy_versions: number[];
  spans: SequenceSpan[];
}

export interface CallLink {
  call_id: string;
  parent_call_id: string | null;
  parent_resolution: ParentResolution;
  /** Index in `sequences`, or null when the call was dropped. */
  sequence: number | null;
  reason: string;
}

export interface TokenRollout {
  /** Set when the lineage could not be resolved and the setting says to mask: the trainer must not use this rollout. */
  masked: string | null;
  sequences: TokenSequence[];
  links: CallLink[];
  dropped: Array<{ call_id: string; reason: string }>;
}

interface Open {
  seq: TokenSequence;
  /** False once a gap closed it (broken = split): nothing extends it any more. */
  open: boolean;
}

const startsWith = (whole: readonly number[], head: readonly number[]): boolean =>
  head.length <= whole.length && head.every((t, i) => whole[i] === t);

function append(seq: TokenSequence, r: TokenRecord, from: number): void {
  const promptStart = seq.token_ids.length;
  for (const t of r.prompt_token_ids.slice(from)) {
    seq.token_ids.push(t);
    seq.logprobs.push(0);
    seq.loss_mask.push(0);
  }
  const generationStart = seq.token_ids.length;
  r.generation_token_ids.forEach((t, i) => {
    seq.token_ids.push(t);
    seq.logprobs.push(r.generation_log_probs[i]!);
    seq.loss_mask.push(1);
  });
  seq.call_ids.push(r.model_call_id);
  seq.policy_versions.push(r.policy_version);
  seq.spans.push({ call_id: r.model_call_id, prompt_start: promptStart, generation_start: generationStart, end: seq.token_ids.length });
}

function fresh(r: TokenRecord): TokenSequence {
  const seq: TokenSequence = { call_ids: [], token_ids: [], logprobs: [], loss_mask: [], policy_versions: [], spans: [] };
  append(seq, r, 0);
  return seq;
}

/** The open sequences the prompt extends, longest first; more than one of that length is ambiguous. */
function parentsOf(all: readonly Open[], prompt: readonly number[]): Open[] {
  const fits = all.filter((o) => o.open && startsWith(prompt, o.seq.token_ids));
  const longest = Math.max(-1, ...fits.map((o) => o.seq.token_ids.length));
  return fits.filter((o) => o.seq.token_ids.length === longest);
}

/** Records in the order their calls ended (each turn's file order, turns in order). */
export function linkCalls(records: readonly TokenRecord[], settings: LinkSettings = DEFAULT_LINK_SETTINGS): TokenRollout {
  const all: Open[] = [];
  const links: CallLink[] = [];
  const dropped: TokenRollout['dropped'] = [];
  const brokenAt = (r: TokenRecord, reason: string): TokenRollout | null => {
    if (settings.broken === 'mask') {
      return { masked: `the lineage of call ${r.model_call_id} cannot be resolved: ${reason}`, sequences: [], links: [], dropped: [] };
    }
    for (const o of all) o.open = false;
    return null;
  };
  for (const r of records) {
    const problem = r.capture_error ?? (r.generation_token_ids.length !== r.generation_log_probs.length ? 'its generation has a logprob count unlike its token count' : null);
    if (problem) {
      const masked = brokenAt(r, `its tokens were not captured (${problem})`);
      if (masked) return masked;
      dropped.push({ call_id: r.model_call_id, reason: `no tokens (${problem}); the sequences before it end here` });
      links.push({ call_id: r.model_call_id, parent_call_id: null, parent_resolution: 'unresolved', sequence: null, reason: 'no tokens' });
      continue;
    }
    const parents = parentsOf(all, r.prompt_token_ids);
    if (parents.length > 1) {
      const masked = brokenAt(r, `its prompt extends ${parents.length} identical sequences (calls ${parents.map((p) => p.seq.call_ids.at(-1)).join(', ')})`);
      if (masked) return masked;
      all.push({ seq: fresh(r), open: true });
      links.push({ call_id: r.model_call_id, parent_call_id: null, parent_resolution: 'unresolved', sequence: all.length - 1, reason: 'ambiguous parent: split into its own sequence' });
      continue;
    }
    const parent = parents[0];
    if (parent) {
      const parentId = parent.seq.call_ids.at(-1)!;
      append(parent.seq, r, parent.seq.token_ids.length);
      links.push({ call_id: r.model_call_id, parent_call_id: parentId, parent_resolution: 'resolved', sequence: all.indexOf(parent), reason: 'extends its parent by exact token prefix' });
      continue;
    }
    const first = all.length === 0 && dropped.length === 0;
    if (first || settings.unextended === 'split') {
      all.push({ seq: fresh(r), open: true });
      links.push({ call_id: r.model_call_id, parent_call_id: null, parent_resolution: 'root', sequence: all.length - 1, reason: first ? 'the first call' : 'extends no open sequence: its own sequence' });
    } else {
      dropped.push({ call_id: r.model_call_id, reason: 'extends no open sequence (a subagent, a retried call or a rewritten history); unextended = drop' });
      links.push({ call_id: r.model_call_id, parent_call_id: null, parent_resolution: 'unresolved', sequence: null, reason: 'dropped' });
    }
  }
  return { masked: null, sequences: all.map((o) => o.seq), links, dropped };
}

