import { proxyActivities } from '@temporalio/workflow';
import type { SharedActivities } from '../activities/shared-activities.ts';
import type { PolicyProbe, PolicyProbeRequest, ProbeResult } from './types.ts';

const { probeAgentModel, probePolicy } = proxyActivities<SharedActivities>({ startToCloseTimeout: '5 minutes', retry: { maximumAttempts: 3 } });

/** One probe call through a worker's gateway (the worker holds the keys, not the client). */
export async function modelProbeWorkflow(req: { agent: string; model?: string; agentArgs?: Record<string, string> }): Promise<ProbeResult> {
  return probeAgentModel.executeWithOptions({ summary: `probe ${req.model ?? ''} for ${req.agent}` }, [req]);
}

/** A rollout run's policy endpoint, asked from a worker (where its gateways call it from, with the key it holds). */
export async function policyProbeWorkflow(req: PolicyProbeRequest): Promise<PolicyProbe> {
  return probePolicy.executeWithOptions({ summary: `probe policy ${req.model} at ${req.endpoint}` }, [req]);
}
