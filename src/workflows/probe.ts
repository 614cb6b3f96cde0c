import { proxyActivities } from '@temporalio/workflow';
import type { SharedActivities } from '../activities/shared-activities.ts';
import type { ProbeResult } from './types.ts';

const { probeAgentModel } = proxyActivities<SharedActivities>({ startToCloseTimeout: '5 minutes', retry: { maximumAttempts: 3 } });

/** One probe call through a worker's gateway (the worker holds the keys, not the client). */
export async function modelProbeWorkflow(req: { agent: string; model?: string; agentArgs?: Record<string, string> }): Promise<ProbeResult> {
  return probeAgentModel.executeWithOptions({ summary: `probe ${req.model ?? ''} for ${req.agent}` }, [req]);
}
