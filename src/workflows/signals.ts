import { defineQuery, defineSignal } from '@temporalio/workflow';
import type { BatchProgress } from './types.ts';

export interface EpisodeDone {
  workflowId: string;
  outcome: 'scored' | 'masked' | 'failed';
  reward: number | null;
}

/** An episode tells its batch it closed, by the batch's workflow id, so it reaches the batch's current run. */
export const episodeDoneSignal = defineSignal<[EpisodeDone]>('episodeDone');
export const progressQuery = defineQuery<BatchProgress>('progress');
