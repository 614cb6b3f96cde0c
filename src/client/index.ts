// The library a user's script imports: start a batch, watch and steer it, collect rows, retry, regrade.
export { startBatch, BatchHandle, newBatchId, type StartBatchOptions, type BatchSummary } from './batch.ts';
export { batchWorkflowId, listEpisodes, newestEpisodes, parseEpisodeId, type EpisodeRef } from './episodes.ts';
export { type RetrySelection } from './retry.ts';
export { type RegradeSelection } from './regrade.ts';
export { type EpisodeSelection } from './cancel-episodes.ts';
export { BatchControlError } from './steer.ts';
export { ResultsFolder, metricsOf, passAtK, newestAttempts, type Metrics, type SkippedEntry } from './results.ts';
export type { AgentName, BatchProgress, ResultRow } from '../workflows/types.ts';
export { startRun, RunHandle, RunRequestError, type StartRunOptions } from './rollouts.ts';
export type { Group, GroupPolicy, RunStatus, SampleRow, TokenRolloutFile } from '../rollouts/types.ts';
export { openStore, readEpisodeFiles, sampleTokens, storedAttemptOf, type EpisodeFilesRef, type ResultsStore, type SampleTokens } from './episode-tokens.ts';
