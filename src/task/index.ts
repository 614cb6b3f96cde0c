// The task layer's public API: loading Harbor-format task folders into immutable, effective Task values.
//
//   loadDataset(root, { agent, allowUnsupportedPairing, imageAliases, strict, only, logger })
//     → { root, settings, tasks, refused, warnings }; dataset-level problems throw a DatasetRefusal.
//   loadTask(taskPath, { datasetRoot, ...same }) → Task; throws a TaskRefusal (toSkippedEntry for skipped.json).
//   checkDigest(expected, task) → { ok: true } | DigestMoved, for an episode whose batch recorded a digest.
//   task.image is the Dockerfile plan (prebuilt | pull | overlay | build, RUN lines with their settings).
//   Values are effective: overrides and multipliers are applied once, here; nothing downstream scales again.
//   Env tables stay raw: resolveTemplates resolves `${VAR}` at seed; resolveDockerfileEnv resolves Dockerfile ENV against the base image;
//   envTablesOf + firstUnsetVariable find an unset `${VAR}` before any sandbox starts.
//   TASK_LAYOUT / stepLayout / inTask: the one home of a task folder's paths (layout.ts).
export { loadDataset, loadDatasetSync, loadTask, loadTaskSync, buildTaskOrRefusal } from './load.ts';
export type { LoadOptions, LoadTaskOptions, LoadedDataset, Logger } from './load.ts';
export type { BuildContext, DatasetDefaults, ImageNeed, ResourceOverride } from './build-context.ts';
export { TASK_LAYOUT, SANDBOX_LAYOUT, SOLUTION_FILES, DATASET_LAYOUT, stepLayout, inTask } from './layout.ts';
export { parseDatasetToml, digestSettingsFor, checkAgentAllowed, checkOverridesNameTasks } from './dataset-config.ts';
export type { DatasetSettings, GymType } from './dataset-config.ts';
export { discoverTaskFolders, MAX_DEPTH } from './discovery.ts';
export type { FoundTask } from './discovery.ts';
export { classifyDockerfile, dockerWords, expandDockerfileValue, logicalLines, parseEnvArgs, resolveDockerfileEnv, DockerfileWordError } from './dockerfile.ts';
export type { DockerfileClassification, DockerfileInstruction, DockerfileMode, ResolvedDockerfileEnv, RunLine } from './dockerfile.ts';
export { computeTaskDigest, checkDigest, canonicalJson } from './digest.ts';
export type { DigestCheck, DigestMoved, DigestExtras } from './digest.ts';
export { TaskRefusal, DatasetRefusal, toSkippedEntry, formatDetail } from './errors.ts';
export type { Refusal, RefusalCode, RefusalDetail, DatasetRefusalCode, SkippedEntry } from './errors.ts';
export { applyImageAlias, normaliseImageRef, parseImageAliases } from './image-alias.ts';
export { resolveTemplates, templateVariable, MIN_REDACTED_HOST_VALUE, type ResolvedTemplates } from './template.ts';
export { envTablesOf, episodeSecretValues, firstUnsetVariable, unsetVariableMessage } from './env-tables.ts';
export type { EnvTable, UnsetVariable } from './env-tables.ts';
export { stripCanary } from './instruction.ts';
export { isJunk, readTaskFolder, snapshotFromFiles } from './snapshot.ts';
export type { TaskSnapshot, SnapshotFile } from './snapshot.ts';
export { parseSizeToMb } from './legacy.ts';
export { composeInterpolationEnv } from './compose-variables.ts';
export type * from './model.ts';
export { agentSandboxNetworking, phasePolicy, phasePolicyFor, samePolicy, type Phase } from './network.ts';
export { solutionForTurn, solutionStatus, type SolutionStatus, type TurnSolution } from './solution.ts';
