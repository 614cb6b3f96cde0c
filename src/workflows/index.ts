export { episodeWorkflow } from './episode.ts';
export { batchWorkflow, progressQuery } from './batch.ts';
