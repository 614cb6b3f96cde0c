import { join } from 'node:path';
import { homePath } from '../config/paths.ts';
import type { TurnRef } from '../activities/types.ts';

/** Per-episode logs live on the host that ran the episode, under BERTH_HOME. */
export const episodeLogsDir = (workflowId: string, runId: string): string =>
  homePath('episodes', workflowId.replace(/[^A-Za-z0-9_.-]+/g, '_'), runId);

/**
 * One turn's logs (agent/, verifier/, artifacts/): a multi-step task's under steps/<name>/ as Harbor lays out a
 * trial's steps, a single-step task's under turn-1/.
 */
export const turnLogsDir = (episodeDir: string, turn: number, stepName: string | null): string =>
  stepName !== null ? join(episodeDir, 'steps', stepName) : join(episodeDir, `turn-${turn + 1}`);

export const turnDirOf = (ref: Pick<TurnRef, 'sandbox' | 'plan' | 'turn'>): string =>
  turnLogsDir(ref.sandbox.logsDir, ref.turn, ref.plan.multiStep ? ref.plan.steps[ref.turn]!.name : null);
