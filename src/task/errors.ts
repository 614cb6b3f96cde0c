// Typed refusals. A task refusal skips one task; a dataset refusal stops the command.
// Every message names the file, the key, the value and the fix.

export type RefusalCode =
  | 'malformed_toml'
  | 'invalid_value'
  | 'missing_instruction'
  | 'missing_tests'
  | 'missing_step_folder'
  | 'missing_step_instruction'
  | 'missing_step_test'
  | 'missing_image'
  | 'separate_verifier_without_image'
  | 'unsupported_os'
  | 'unsupported_tpu'
  | 'shared_verifier_with_environment'
  | 'separate_verifier_for_artifacts'
  | 'compose_unsupported'
  | 'verifier_compose'
  | 'invalid_artifact'
  | 'invalid_input'
  | 'mcp_without_endpoint'
  | 'symlinked_task_folder'
  | 'symlink_outside_task'
  | 'duplicate_task_id'
  | 'unreadable'
  | 'unsupported_transcript'
  | 'parameterized_task'
  | 'parameterized_row'
  | 'invalid_task_data'
  | 'publish_separate_python'
  | 'publish_reads_response'
  | 'publish_duplicate_name'
  | 'digest_moved';

export interface RefusalDetail {
  code: RefusalCode;
  /** Path of the file the problem is in (absolute, or relative to the task folder). */
  file: string;
  /** Dotted key inside that file, or the folder entry, or '' when it is about the whole file. */
  key: string;
  /** The offending value, rendered for a human; undefined when absent. */
  value?: unknown;
  /** What is wrong. */
  problem: string;
  /** What the user should do. */
  fix: string;
}

export function renderValue(value: unknown): string {
  if (value === undefined) return '(absent)';
  if (typeof value === 'string') return JSON.stringify(value);
  try {
    const text = JSON.stringify(value);
    if (text === undefined) return String(value);
    return text.length > 200 ? `${text.slice(0, 197)}...` : text;
  } catch {
    return String(value);
  }
}

export function formatDetail(d: RefusalDetail): string {
  const where = d.key ? `${d.file}: ${d.key}` : d.file;
  const value = d.value === undefined ? '' : ` = ${renderValue(d.value)}`;
  return `${where}${value}: ${d.problem}. Fix: ${d.fix}`;
}

/** Why one task does not load. Listed in skipped.json; the rest of the dataset still runs. */
export class TaskRefusal extends Error {
  readonly stage = 'load' as const;
  readonly code: RefusalCode;
  readonly file: string;
  readonly key: string;
  readonly value: unknown;
  readonly problem: string;
  readonly fix: string;
  constructor(
    readonly task_id: string,
    readonly path: string,
    detail: RefusalDetail,
  ) {
    super(formatDetail(detail));
    this.name = 'TaskRefusal';
    this.code = detail.code;
    this.file = detail.file;
    this.key = detail.key;
    this.value = detail.value;
    this.problem = detail.problem;
    this.fix = detail.fix;
  }
  get reason(): string {
    return this.message;
  }
}

export type Refusal = TaskRefusal;

export interface SkippedEntry {
  task_id: string;
  path: string;
  reason: string;
  stage: 'load' | 'prepare' | 'seed';
}

export function toSkippedEntry(r: TaskRefusal): SkippedEntry {
  return { task_id: r.task_id, path: r.path, reason: r.message, stage: r.stage };
}

export type DatasetRefusalCode =
  | 'dataset_malformed'
  | 'dataset_unknown_key'
  | 'dataset_invalid_value'
  | 'dataset_example_type'
  | 'dataset_license_required'
  | 'agent_not_allowed'
  | 'override_names_no_task'
  | 'dataset_not_found'
  | 'nothing_loaded'
  | 'strict_refusal'
  | 'task_data_model';

/** A problem with the dataset as a whole: it stops the command. */
export class DatasetRefusal extends Error {
  readonly code: DatasetRefusalCode;
  readonly file: string;
  readonly key: string;
  readonly value: unknown;
  readonly fix: string;
  constructor(code: DatasetRefusalCode, detail: Omit<RefusalDetail, 'code'>) {
    super(formatDetail({ ...detail, code: 'invalid_value' }));
    this.name = 'DatasetRefusal';
    this.code = code;
    this.file = detail.file;
    this.key = detail.key;
    this.value = detail.value;
    this.fix = detail.fix;
  }
}

/** Thrown inside the pure builder; caught and turned into a TaskRefusal with the task's id and path. */
export class RefusalSignal extends Error {
  constructor(readonly detail: RefusalDetail) {
    super(formatDetail(detail));
    this.name = 'RefusalSignal';
  }
}

export function refuse(detail: RefusalDetail): never {
  throw new RefusalSignal(detail);
}
