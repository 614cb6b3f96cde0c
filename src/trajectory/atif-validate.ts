// validateAtif: checks an object against ATIF v1.7 as Harbor 0.25 describes it: closed
// objects, required fields and types (a zod schema), then the rules that span fields (step ids in order,
// agent-only fields, tool-call references, subagent ids). Every error names the field by its path, such as
// `steps[1].tool_calls[0].function_name`.
//
// Not checked: that a local image a ContentPart points to exists (that needs the file system).

import { z } from 'zod';
import {
  AGENT_ONLY_STEP_FIELDS,
  ATIF_IMAGE_MEDIA_TYPES,
  ATIF_SCHEMA_VERSIONS,
  type AtifStep,
  type AtifTrajectory,
} from './atif-types.ts';

export type AtifValidation = { ok: true } | { ok: false; errors: string[] };

const extra = z.record(z.string(), z.unknown());
const count = z.int().nonnegative();
const finite = z.number().refine(Number.isFinite, 'must be a finite number');

const contentPart = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('text'), text: z.string() }),
  z.strictObject({
    type: z.literal('image'),
    source: z.strictObject({ media_type: z.enum(ATIF_IMAGE_MEDIA_TYPES), path: z.string() }),
  }),
]);
const content = z.union([z.string(), z.array(contentPart)]);

const subagentRef = z
  .strictObject({
    trajectory_id: z.string().optional(),
    trajectory_path: z.string().optional(),
    session_id: z.string().optional(),
    extra: extra.optional(),
  })
  .refine((r) => r.trajectory_id !== undefined || r.trajectory_path !== undefined, {
    message: 'needs trajectory_id or trajectory_path',
  });

const toolCall = z.strictObject({
  tool_call_id: z.string(),
  function_name: z.string(),
  arguments: z.record(z.string(), z.unknown()),
  extra: extra.optional(),
});

const observation = z.strictObject({
  results: z.array(
    z.strictObject({
      source_call_id: z.string().optional(),
      content: z.union([content, z.null()]).optional(),
      subagent_trajectory_ref: z.array(subagentRef).optional(),
      extra: extra.optional(),
    }),
  ),
});

const metrics = z.strictObject({
  prompt_tokens: count.optional(),
  completion_tokens: count.optional(),
  cached_tokens: count.optional(),
  cost_usd: finite.optional(),
  prompt_token_ids: z.array(z.int()).optional(),
  completion_token_ids: z.array(z.int()).optional(),
  logprobs: z.array(finite).optional(),
  extra: extra.optional(),
});

const step = z.strictObject({
  step_id: z.int().positive(),
  source: z.enum(['system', 'user', 'agent']),
  message: content,
  timestamp: z.iso.datetime({ offset: true, local: true }).optional(),
  observation: observation.optional(),
  llm_call_count: count.optional(),
  is_copied_context: z.boolean().optional(),
  extra: extra.optional(),
  model_name: z.string().optional(),
  reasoning_effort: z.union([z.string(), finite]).optional(),
  reasoning_content: z.string().optional(),
  tool_calls: z.array(toolCall).optional(),
  metrics: metrics.optional(),
});

const trajectory = z.strictObject({
  schema_version: z.enum(ATIF_SCHEMA_VERSIONS),
  session_id: z.string().optional(),
  trajectory_id: z.string().optional(),
  agent: z.strictObject({
    name: z.string(),
    version: z.string(),
    model_name: z.string().optional(),
    tool_definitions: z.array(z.record(z.string(), z.unknown())).optional(),
    extra: extra.optional(),
  }),
  steps: z.array(step).min(1, 'must hold at least one step'),
  notes: z.string().optional(),
  final_metrics: z
    .strictObject({
      total_prompt_tokens: count.optional(),
      total_completion_tokens: count.optional(),
      total_cached_tokens: count.optional(),
      total_cost_usd: finite.optional(),
      total_steps: count.optional(),
      extra: extra.optional(),
    })
    .optional(),
  continued_trajectory_ref: z.string().optional(),
  extra: extra.optional(),
  // Checked one by one below, as whole trajectories, so their errors carry their own paths.
  subagent_trajectories: z.array(z.unknown()).optional(),
});

function formatPath(path: ReadonlyArray<PropertyKey>): string {
  let out = '';
  for (const part of path) {
    if (typeof part === 'number') out += `[${part}]`;
    else out += out === '' ? String(part) : `.${String(part)}`;
  }
  return out;
}

/** `prefix` is '' or a path ending in '.', such as 'subagent_trajectories[0].'. */
function fieldName(prefix: string, path: ReadonlyArray<PropertyKey>): string {
  if (path.length === 0) return prefix === '' ? '(trajectory)' : prefix.slice(0, -1);
  return prefix + formatPath(path);
}

// A union's own message is only "Invalid input": report instead the issues of the branch that got furthest
// into the value (for a message that is a list, the list's branch), with their full paths.
function expandUnions(issues: readonly z.core.$ZodIssue[], base: ReadonlyArray<PropertyKey> = []): Array<{ path: PropertyKey[]; issue: z.core.$ZodIssue }> {
  const out: Array<{ path: PropertyKey[]; issue: z.core.$ZodIssue }> = [];
  for (const issue of issues) {
    const path = [...base, ...issue.path];
    if (issue.code === 'invalid_union' && issue.errors.length > 0) {
      const depth = (branch: readonly z.core.$ZodIssue[]) => Math.max(0, ...branch.map((i) => i.path.length));
      const best = issue.errors.reduce((a, b) => (depth(b) > depth(a) ? b : a));
      if (depth(best) > 0) {
        out.push(...expandUnions(best, path));
        continue;
      }
    }
    out.push({ path, issue });
  }
  return out;
}

const UNION_HINTS: Record<string, string> = {
  message: 'must be a string or a list of content parts',
  content: 'must be a string, a list of content parts, or null',
  reasoning_effort: 'must be a string or a number',
  type: 'must be "text" or "image"',
};

function structuralErrors(issues: z.core.$ZodIssue[], prefix: string): string[] {
  return expandUnions(issues).map(({ path, issue }) => {
    const where = fieldName(prefix, path);
    if (issue.code === 'unrecognized_keys') {
      const keys = issue.keys.map((k) => (path.length === 0 && prefix === '' ? k : `${where}.${k}`));
      return `${keys.join(', ')}: unknown key${issue.keys.length > 1 ? 's' : ''} (ATIF objects are closed; put custom data in "extra")`;
    }
    if (issue.code === 'invalid_union') return `${where}: ${UNION_HINTS[String(path.at(-1))] ?? 'matches none of the allowed types'}`;
    return `${where}: ${issue.message}`;
  });
}

function stepErrors(s: AtifStep, index: number, at: string): string[] {
  const errors: string[] = [];
  const here = `${at}steps[${index}]`;
  if (s.step_id !== index + 1) {
    errors.push(`${here}.step_id: must be ${index + 1} (step ids count from 1 in order), found ${s.step_id}`);
  }
  if (s.source !== 'agent') {
    for (const field of AGENT_ONLY_STEP_FIELDS) {
      if (s[field] !== undefined) {
        errors.push(`${here}.${field}: only agent steps may have ${field} (this step's source is "${s.source}")`);
      }
    }
  } else if (s.llm_call_count === 0) {
    for (const field of ['metrics', 'reasoning_content'] as const) {
      if (s[field] !== undefined) {
        errors.push(`${here}.${field}: not allowed on an agent step with llm_call_count 0`);
      }
    }
  }
  const callIds = new Set((s.tool_calls ?? []).map((c) => c.tool_call_id));
  (s.observation?.results ?? []).forEach((result, j) => {
    if (result.source_call_id !== undefined && !callIds.has(result.source_call_id)) {
      errors.push(
        `${here}.observation.results[${j}].source_call_id: "${result.source_call_id}" names no tool_call_id of the same step`,
      );
    }
  });
  return errors;
}

function validateAt(obj: unknown, at: string, isSubagent: boolean): string[] {
  const parsed = trajectory.safeParse(obj);
  if (!parsed.success) return structuralErrors(parsed.error.issues, at);
  const t = parsed.data as Omit<AtifTrajectory, 'subagent_trajectories'> & { subagent_trajectories?: unknown[] };

  const errors: string[] = [];
  const v = Number(t.schema_version.slice('ATIF-v1.'.length));
  if (v <= 6 && t.session_id === undefined) {
    errors.push(`${at}session_id: required by ${t.schema_version} (optional only from ATIF-v1.7)`);
  }
  if (isSubagent && t.trajectory_id === undefined) {
    errors.push(`${at}trajectory_id: required on an embedded subagent trajectory`);
  }
  t.steps.forEach((s, i) => errors.push(...stepErrors(s as AtifStep, i, at)));

  const seen = new Map<string, number>();
  (t.subagent_trajectories ?? []).forEach((sub, k) => {
    const subAt = `${at}subagent_trajectories[${k}].`;
    errors.push(...validateAt(sub, subAt, true));
    const id = (sub as { trajectory_id?: unknown } | null)?.trajectory_id;
    if (typeof id === 'string') {
      const first = seen.get(id);
      if (first !== undefined) {
        errors.push(`${subAt}trajectory_id: "${id}" is already used by subagent_trajectories[${first}]`);
      } else seen.set(id, k);
    }
  });
  return errors;
}

export function validateAtif(obj: unknown): AtifValidation {
  const errors = validateAt(obj, '', false);
  return errors.length === 0 ? { ok: true } : { ok: false, errors };
}
