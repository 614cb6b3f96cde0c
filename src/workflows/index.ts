export { episodeWorkflow } from './episode.ts';
export { batchWorkflow } from './batch.ts';
export { prepareWorkflow } from './prepare.ts';
export { openaiTurnWorkflow } from './openai-turn.ts';
export { episodeDoneSignal, progressQuery } from './signals.ts';
export { regradeCheckWorkflow, regradeWorkflow } from './regrade.ts';
export { modelProbeWorkflow, policyProbeWorkflow } from './probe.ts';
export { hostArchiveWorkflow, hostFilesPutWorkflow } from './host-files.ts';
export { rolloutRunWorkflow } from './rollout-run.ts';
