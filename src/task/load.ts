// Loading a dataset or one task from disk: discovery, dataset.toml, snapshots, then the pure builder.
import { existsSync, lstatSync, readFileSync, statSync } from 'node:fs';
import { basename, dirname, join, relative, resolve } from 'node:path';
import type { BuildContext, ResourceOverride } from './build-context.ts';
import { buildTask } from './build-task.ts';
import {
  checkAgentAllowed,
  checkOverridesNameTasks,
  digestSettingsFor,
  parseDatasetToml,
  type DatasetSettings,
} from './dataset-config.ts';
import { discoverTaskFolders, type FoundTask } from './discovery.ts';
import { DatasetRefusal, RefusalSignal, TaskRefusal } from './errors.ts';
import { DATASET_LAYOUT } from './layout.ts';
import type { Task } from './model.ts';
import { expandTemplate, isTemplateFolder, refreshRendered } from './parameterized/expand.ts';
import { readTaskFolder, sha256Hex, type TaskSnapshot } from './snapshot.ts';

export interface Logger {
  warn(message: string): void;
}

export interface LoadOptions {
  /** The agent that will run: checked against [gym] allowed_agents (the oracle is always admitted). */
  agent?: string;
  allowUnsupportedPairing?: boolean;
  /** FROM=TO image rewrites, applied to docker_image, FROM and verifier images before anything else. */
  imageAliases?: Readonly<Record<string, string>>;
  /** berth.toml [resources]: replaces the effective cpus / memory_mb of every sandbox (see ResourceOverride). */
  resourceOverride?: ResourceOverride;
  /** berth.toml [episode].separate_verifier_for_artifacts, and the file that set it (for messages). */
  separateVerifierForArtifacts?: boolean;
  configFile?: string;
  /** Stop (throw a DatasetRefusal) when any task is refused. */
  strict?: boolean;
  /** Whether prepare recorded an image a task needs; unset, nothing is checked (see ImageNeed). */
  imageRecorded?: BuildContext['imageRecorded'];
  /** Only load tasks whose id passes (discovery and override checks still see every folder). */
  only?: (taskId: string) => boolean;
  logger?: Logger;
}

export interface LoadedDataset {
  root: string;
  settings: DatasetSettings;
  tasks: Task[];
  refused: TaskRefusal[];
  warnings: string[];
}

/** loadTask runs once per episode: its unknown-key notes are logged once per process. */
const loggedByLoadTask = new Set<string>();

const stderrLogger: Logger = { warn: (m) => process.stderr.write(`warning: ${m}\n`) };

function readDatasetSettings(root: string, warn: (m: string) => void): DatasetSettings {
  const file = join(root, DATASET_LAYOUT.datasetToml);
  const text = existsSync(file) ? readFileSync(file, 'utf8') : null;
  const verifierFile = join(root, DATASET_LAYOUT.verifierPy);
  const verifierPy = existsSync(verifierFile) && statSync(verifierFile).isFile()
    ? { path: verifierFile, sha256: sha256Hex(readFileSync(verifierFile)) }
    : null;
  return parseDatasetToml(root, text === null ? null : file, text, verifierPy, warn);
}

/**
 * Whether the dataset root holds task_data.py, the model that types task fields. The loader does not run it (no
 * code of a dataset runs on the host): the commands that run a dataset validate every task's fields with it in a
 * sandbox first (src/client/task-data.ts).
 */
function typedFields(root: string): boolean {
  return existsSync(join(root, DATASET_LAYOUT.taskDataPy));
}

function contextFor(
  id: string,
  settings: DatasetSettings,
  options: LoadOptions,
  warn: (m: string) => void,
  unknownKey: (k: string) => void,
  datasetTaskDataPy: boolean,
): BuildContext {
  return {
    id,
    datasetRoot: settings.root,
    defaults: settings.defaults,
    override: settings.overrides[id],
    digestSettings: digestSettingsFor(settings, id),
    datasetVerifier: settings.verifier_py,
    datasetTaskDataPy,
    imageAliases: options.imageAliases,
    resourceOverride: options.resourceOverride,
    separateVerifierForArtifacts: options.separateVerifierForArtifacts,
    configFile: options.configFile,
    imageRecorded: options.imageRecorded,
    agent: options.agent,
    allowUnsupportedPairing: options.allowUnsupportedPairing,
    datasetFile: settings.file ?? join(settings.root, DATASET_LAYOUT.datasetToml),
    warn,
    unknownKey,
  };
}

/** Builds a task from a snapshot, turning a refusal signal into a TaskRefusal; other errors propagate. */
export function buildTaskOrRefusal(snapshot: TaskSnapshot, ctx: BuildContext): Task | TaskRefusal {
  try {
    return buildTask(snapshot, ctx);
  } catch (e) {
    if (e instanceof RefusalSignal) {
      const d = e.detail;
      const file = d.file.startsWith('/') ? d.file : join(snapshot.root, d.file);
      return new TaskRefusal(ctx.id, snapshot.root, { ...d, file });
    }
    throw e;
  }
}

function snapshotOrRefusal(found: FoundTask): TaskSnapshot | TaskRefusal {
  if (found.symlink) {
    return new TaskRefusal(found.id, found.path, {
      code: 'symlinked_task_folder',
      file: found.path,
      key: '',
      problem: 'a task folder may not be a symbolic link',
      fix: 'move or copy the task folder into the dataset instead of linking it',
    });
  }
  try {
    return readTaskFolder(found.path, found.entries);
  } catch (e) {
    return new TaskRefusal(found.id, found.path, {
      code: 'unreadable',
      file: found.path,
      key: '',
      problem: `the folder cannot be read (${(e as Error).message})`,
      fix: 'check the folder\'s permissions',
    });
  }
}

function makeUnknownKeyLogger(logger: Logger, warnings: string[], logged = new Set<string>()): (taskId: string) => (key: string) => void {
  return (taskId) => (key) => {
    if (logged.has(key)) return;
    logged.add(key);
    const m = `task.toml: unknown key ${key} (first seen in task ${taskId}) is ignored.`;
    warnings.push(m);
    logger.warn(m);
  };
}

/** Template folders (tasks.jsonl beside task.toml) replaced by one rendered folder per row. */
function expandTemplates(found: FoundTask[], root: string): { found: FoundTask[]; refused: TaskRefusal[] } {
  const out: FoundTask[] = [];
  const refused: TaskRefusal[] = [];
  for (const f of found) {
    if (f.symlink || !isTemplateFolder(f.path)) {
      out.push(f);
      continue;
    }
    const e = expandTemplate(f, root);
    out.push(...e.found);
    refused.push(...e.refused);
  }
  return { found: out, refused };
}

/**
 * Loads every task of a dataset. Refused tasks are listed, never thrown; dataset-level problems
 * (dataset.toml, allowed_agents, an override naming no task, a refusal under `strict`) throw a
 * DatasetRefusal.
 */
export async function loadDataset(datasetRoot: string, options: LoadOptions = {}): Promise<LoadedDataset> {
  return loadDatasetSync(datasetRoot, options);
}

export function loadDatasetSync(datasetRoot: string, options: LoadOptions = {}): LoadedDataset {
  const root = resolve(datasetRoot);
  if (!existsSync(root) || !statSync(root).isDirectory()) {
    throw new DatasetRefusal('dataset_not_found', { file: root, key: '', problem: 'the dataset folder does not exist', fix: 'pass the folder that holds the task folders' });
  }
  const logger = options.logger ?? stderrLogger;
  const warnings: string[] = [];
  const warn = (m: string): void => {
    warnings.push(m);
    logger.warn(m);
  };
  const { found, refused: badRows } = expandTemplates(discoverTaskFolders(root), root);
  const settings = readDatasetSettings(root, warn);
  checkAgentAllowed(settings, options.agent, options.allowUnsupportedPairing);
  checkOverridesNameTasks(settings, new Set(found.map((f) => f.id)));
  const typed = typedFields(root);

  const byId = new Map<string, FoundTask[]>();
  for (const f of found) byId.set(f.id, [...(byId.get(f.id) ?? []), f]);

  const unknownKeyFor = makeUnknownKeyLogger(logger, warnings);
  const tasks: Task[] = [];
  const refused: TaskRefusal[] = badRows.filter((r) => !options.only || options.only(r.task_id));
  for (const f of found) {
    if (options.only && !options.only(f.id)) continue;
    const same = byId.get(f.id)!;
    if (same.length > 1) {
      const others = same.filter((o) => o !== f).map((o) => relative(root, o.path) || '.');
      refused.push(
        new TaskRefusal(f.id, f.path, {
          code: 'duplicate_task_id',
          file: f.path,
          key: '',
          value: f.id,
          problem: `task id "${f.id}" is also the folder name of ${others.join(', ')}; ids must be unique in a dataset`,
          fix: 'rename one of the folders',
        }),
      );
      continue;
    }
    const snap = snapshotOrRefusal(f);
    if (snap instanceof TaskRefusal) {
      refused.push(snap);
      continue;
    }
    const result = buildTaskOrRefusal(snap, contextFor(f.id, settings, options, warn, unknownKeyFor(f.id), typed));
    if (result instanceof TaskRefusal) refused.push(result);
    else tasks.push(result);
  }
  if (options.strict && refused.length > 0) {
    throw new DatasetRefusal('strict_refusal', {
      file: root,
      key: '',
      value: refused.map((r) => r.task_id),
      problem: `${refused.length} task(s) refused under --strict; first: ${refused[0]!.message}`,
      fix: 'fix the refused tasks, or run without --strict to skip them',
    });
  }
  return { root, settings, tasks, refused, warnings };
}

export interface LoadTaskOptions extends LoadOptions {
  /** The dataset the task belongs to (its dataset.toml and verifier.py apply). Default: the folder's parent. */
  datasetRoot?: string;
}

/** Loads one task folder. Throws a TaskRefusal when it is refused, a DatasetRefusal for dataset problems. */
export async function loadTask(taskPath: string, options: LoadTaskOptions = {}): Promise<Task> {
  return loadTaskSync(taskPath, options);
}

export function loadTaskSync(taskPath: string, options: LoadTaskOptions = {}): Task {
  const path = resolve(taskPath);
  const root = resolve(options.datasetRoot ?? dirname(path));
  const logger = options.logger ?? stderrLogger;
  const warnings: string[] = [];
  const warn = (m: string): void => {
    warnings.push(m);
    logger.warn(m);
  };
  const settings = readDatasetSettings(root, warn);
  checkAgentAllowed(settings, options.agent, options.allowUnsupportedPairing);
  refreshRendered(path, root);
  const id = basename(path);
  const symlink = existsSync(path) && lstatSync(path).isSymbolicLink();
  const snap = snapshotOrRefusal({ id, path, symlink });
  if (snap instanceof TaskRefusal) throw snap;
  const context = contextFor(id, settings, options, warn, makeUnknownKeyLogger(logger, warnings, loggedByLoadTask)(id), typedFields(root));
  const result = buildTaskOrRefusal(snap, context);
  if (result instanceof TaskRefusal) throw result;
  return result;
}
