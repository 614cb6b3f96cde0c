import { join } from 'node:path';
import { homePath } from '../server/paths.ts';

/** Per-episode logs live on the host that ran the episode, under BERTH_HOME. */
export const episodeLogsDir = (workflowId: string, runId: string): string =>
  homePath('episodes', workflowId.replace(/[^A-Za-z0-9_.-]+/g, '_'), runId);

export const turnLogsDir = (episodeDir: string, turn: number): string => join(episodeDir, `turn-${turn + 1}`);
