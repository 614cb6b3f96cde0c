// Task Folder Format § What the loader refuses, Invalid values: a malformed task.toml or override, a bad
// `inputs` entry, an MCP server without an endpoint, an artifact naming `/`, `/tests` or `/logs/verifier`, a `..`
// part or an absolute destination; and a task_data.json that is not one JSON object.
import { posix } from 'node:path';
import { parse as parseToml, TomlError } from 'smol-toml';
import type { z } from 'zod';
import type { BuildContext } from '../build-context.ts';
import { refuse, type RefusalDetail } from '../errors.ts';
import { DATASET_LAYOUT, SANDBOX_LAYOUT, TASK_LAYOUT } from '../layout.ts';
import type { Artifact } from '../model.ts';
import { overrideHas } from '../overrides.ts';
import { taskTomlSchema, type EnvironmentToml, type TaskToml } from '../schema.ts';
import type { TaskSnapshot } from '../snapshot.ts';
import { isTable, type Table } from '../table.ts';
import { dotted } from './keys.ts';

function valueAt(doc: unknown, path: readonly PropertyKey[]): unknown {
  let cur: unknown = doc;
  for (const seg of path) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as any)[seg as any];
  }
  return cur;
}

function zodProblem(issue: z.core.$ZodIssue): string {
  return issue.message.replace(/^Invalid input: /, '');
}

export function parseTaskToml(text: string): Table {
  try {
    return parseToml(text.startsWith('\uFEFF') ? text.slice(1) : text) as Table;
  } catch (e) {
    const where = e instanceof TomlError ? `line ${e.line}, column ${e.column}` : '';
    const first = String((e as Error).message ?? e).split('\n')[0];
    return refuse({
      code: 'malformed_toml',
      file: TASK_LAYOUT.taskToml,
      key: where,
      problem: `not valid TOML (${first})`,
      fix: 'correct the TOML syntax at that position',
    });
  }
}

/** The merged document (task.toml with its override) against the schema; a bad value names whose file it is in. */
export function validateTaskToml(doc: Table, ctx: BuildContext, ownArtifacts: number): TaskToml {
  const result = taskTomlSchema.safeParse(doc);
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  const path = issue.path;
  // Override artifacts come after the task's own, so an index says whose entry it is.
  const artifactIndex = path[0] === 'artifacts' && typeof path[1] === 'number' ? path[1] : null;
  const fromOverride = artifactIndex !== null ? artifactIndex >= ownArtifacts : overrideHas(ctx.override, path);
  const overridePath = artifactIndex !== null && fromOverride ? ['artifacts', artifactIndex - ownArtifacts, ...path.slice(2)] : path;
  const key = dotted(fromOverride ? overridePath : path);
  const detail: RefusalDetail = {
    code: 'invalid_value',
    file: fromOverride ? (ctx.datasetFile ?? DATASET_LAYOUT.datasetToml) : TASK_LAYOUT.taskToml,
    key: fromOverride ? `gym.tasks."${ctx.id}".${key}` : key,
    value: valueAt(doc, path),
    problem: zodProblem(issue),
    fix: `correct ${dotted(path)} (see Task Folder Format § Task settings)`,
  };
  return refuse(detail);
}

export function checkMcpServers(e: EnvironmentToml, key: string): void {
  for (const [i, s] of e.mcp_servers.entries()) {
    const needsUrl = s.transport !== 'stdio';
    if (needsUrl ? !s.url : !s.command) {
      refuse({
        code: 'mcp_without_endpoint',
        file: TASK_LAYOUT.taskToml,
        key: `${key}.mcp_servers[${i}]`,
        value: s.name,
        problem: needsUrl ? `the ${s.transport} MCP server has no url` : 'the stdio MCP server has no command',
        fix: needsUrl ? 'set url, for example "http://mcp-server:8000/mcp"' : 'set command (and args) to start the server',
      });
    }
  }
}

export function checkArtifact(a: Artifact, key: string, file: string): void {
  const bad = (problem: string, fix: string, value: unknown = a.source): never =>
    refuse({ code: 'invalid_artifact', file, key, value, problem, fix });
  const src = a.source;
  if (src.includes('\\')) bad('an artifact path may not contain a backslash', 'write the path with forward slashes');
  if (src.split('/').includes('..')) bad('an artifact path may not have a ".." part', 'name the path without ".."');
  const norm = posix.normalize(src);
  if (norm === '/') bad('the artifact source is the whole file system', 'name the folder or file the verifier needs, e.g. "/workspace"');
  for (const reserved of [SANDBOX_LAYOUT.testsDir, SANDBOX_LAYOUT.verifierLogs]) {
    if (norm === reserved || norm.startsWith(`${reserved}/`)) {
      bad(`an artifact source under ${reserved} is refused (the verifier owns that folder)`, `collect from ${SANDBOX_LAYOUT.artifactsLogs} or the working directory instead`);
    }
  }
  if (a.service !== 'main' && !posix.isAbsolute(src)) bad('an artifact from a sidecar service needs an absolute source', 'write the absolute path inside the service');
  if (a.destination !== null) {
    const d = a.destination;
    if (posix.isAbsolute(d) || /^[A-Za-z]:/.test(d)) bad('the artifact destination must be relative', 'write a path relative to the artifacts folder', d);
    if (d.includes('\\') || d.split('/').includes('..')) bad('the artifact destination may not have ".." or a backslash', 'write a plain relative path', d);
    if (posix.normalize(d) === 'manifest.json') bad('manifest.json is reserved for the artifacts manifest', 'choose another destination', d);
  }
}

/** Task Folder Verifiers § Sidecar inputs: each entry is a plain top-level file name. */
export function checkInput(name: string, key: string, file: string): void {
  const bad = (problem: string): never =>
    refuse({ code: 'invalid_input', file, key, value: name, problem, fix: 'declare a plain top-level file name such as "actions.jsonl"' });
  if (name === '' || name === '.' || name === '..') bad('an input must be a file name');
  if (/[/\\]/.test(name)) bad('an input may not contain a path separator');
  if (/[*?[]/.test(name)) bad('an input may not be a pattern');
  if (['reward.json', 'reward.txt', 'test-stdout.txt'].includes(name)) bad('an input may not be grader output');
}

/** The task's own fields (task_data.json), or null without the file. */
export function readTaskData(snap: TaskSnapshot): unknown {
  const file = snap.files.get(TASK_LAYOUT.taskData);
  if (!file) return null;
  let taskData: unknown;
  try {
    taskData = JSON.parse(file.text ?? '');
  } catch (e) {
    refuse({ code: 'invalid_value', file: TASK_LAYOUT.taskData, key: '', problem: `not valid JSON (${(e as Error).message})`, fix: 'write the task fields as one JSON object' });
  }
  if (!isTable(taskData)) {
    refuse({ code: 'invalid_value', file: TASK_LAYOUT.taskData, key: '', value: taskData, problem: 'the task fields must be a JSON object', fix: 'write the task fields as one JSON object' });
  }
  return taskData;
}
