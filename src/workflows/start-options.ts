import { BERTH_AGENT, BERTH_BATCH, BERTH_DATASET, BERTH_OUTCOME, BERTH_TASK } from './search-attributes.ts';
import { episodeWorkflowId, type EpisodeInput } from './types.ts';

/** How an episode starts, whether a batch starts it or a retry does: id, one-line summary, search attributes. */
export function episodeStartOptions(ep: EpisodeInput) {
  return {
    workflowId: episodeWorkflowId(ep.batchId, ep.taskId, ep.repeat, ep.attempt),
    args: [ep] as [EpisodeInput],
    staticSummary: `${ep.taskId} · repeat ${ep.repeat}${ep.attempt > 1 ? ` · attempt ${ep.attempt}` : ''} · ${ep.agent}`,
    typedSearchAttributes: [
      { key: BERTH_BATCH, value: ep.batchId },
      { key: BERTH_TASK, value: ep.taskId },
      { key: BERTH_DATASET, value: ep.datasetName },
      { key: BERTH_AGENT, value: ep.agent },
      { key: BERTH_OUTCOME, value: 'running' },
    ],
  };
}

