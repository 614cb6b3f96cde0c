import type { BatchInput, EpisodeInput } from './types.ts';

/** Every (task, repeat) of a batch, in order: tasks times repeats. */
export function episodesOf(batch: BatchInput): EpisodeInput[] {
  return batch.tasks.flatMap((t) =>
    Array.from({ length: batch.repeats }, (_, i) => ({
      batchId: batch.batchId,
      datasetName: batch.datasetName,
      datasetPath: batch.datasetPath,
      taskId: t.taskId,
      taskPath: t.taskPath,
      digest: t.digest,
      ...(t.baseImageId !== undefined ? { baseImageId: t.baseImageId } : {}),
      repeat: i + 1,
      attempt: 1,
      agent: batch.agent,
      agentArgs: batch.agentArgs,
      imageAliases: batch.imageAliases,
      episodeSettings: batch.episodeSettings,
      ...(batch.keepFinalState ? { keepFinalState: true } : {}),
      ...(batch.model !== undefined ? { model: batch.model } : {}),
      ...(batch.limits !== undefined ? { limits: batch.limits } : {}),
    })),
  );
}
