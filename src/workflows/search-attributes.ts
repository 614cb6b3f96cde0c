import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

export const BERTH_BATCH = defineSearchAttributeKey('BerthBatch', SearchAttributeType.KEYWORD);
export const BERTH_TASK = defineSearchAttributeKey('BerthTask', SearchAttributeType.KEYWORD);
export const BERTH_DATASET = defineSearchAttributeKey('BerthDataset', SearchAttributeType.KEYWORD);
export const BERTH_AGENT = defineSearchAttributeKey('BerthAgent', SearchAttributeType.KEYWORD);
export const BERTH_OUTCOME = defineSearchAttributeKey('BerthOutcome', SearchAttributeType.KEYWORD);
export const BERTH_FAILURE_KIND = defineSearchAttributeKey('BerthFailureKind', SearchAttributeType.KEYWORD);
export const BERTH_REWARD = defineSearchAttributeKey('BerthReward', SearchAttributeType.DOUBLE);
export const BERTH_TURN = defineSearchAttributeKey('BerthTurn', SearchAttributeType.INT);

export type Outcome = 'running' | 'scored' | 'masked' | 'failed';
