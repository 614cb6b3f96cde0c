// The library a user's script imports: start a batch, watch it, collect rows, retry.
export { startBatch, BatchHandle, newBatchId, type StartBatchOptions, type BatchSummary } from './batch.ts';
export { batchWorkflowId, listEpisodes, newestEpisodes, parseEpisodeId, type EpisodeRef } from './episodes.ts';
export { type RetrySelection } from './retry.ts';
export { ResultsFolder, metricsOf, passAtK, newestAttempts, type Metrics, type SkippedEntry } from './results.ts';
export type { AgentName, BatchProgress, ResultRow } from '../workflows/types.ts';
