import type { Client } from '@temporalio/client';
import { randomBytes } from 'node:crypto';
import type { PolicyProbe, PolicyProbeRequest, ProbeResult } from '../workflows/types.ts';
import { isInstalledAgentName } from '../config/agents.ts';
import { sharedQueue } from '../config/index.ts';

/** A batch whose model refuses the worker's key, or does not exist, never starts. */
export class ModelProbeFailed extends Error {
  override readonly name = 'ModelProbeFailed';
  constructor(readonly kind: string, readonly status: number, reason: string) {
    super(reason);
  }
}

/** One probe call through a worker's gateway for an installed agent; other agents need none. */
export async function probeBeforeBatch(client: Client, req: { agent: string; model?: string; agentArgs?: Record<string, string> }, taskQueue = sharedQueue()): Promise<void> {
  if (!isInstalledAgentName(req.agent)) return;
  const result = await client.workflow.execute('modelProbeWorkflow', {
    taskQueue, workflowId: `berth-probe/${randomBytes(4).toString('hex')}`, args: [req],
    staticSummary: `probe ${req.model ?? '(no model)'} for ${req.agent}`,
  }) as ProbeResult;
  if (!result.ok) throw new ModelProbeFailed(result.kind, result.status, `the batch was not started: ${result.reason}`);
}

/**
 * Before a rollout run whose agent calls the policy: the endpoint, asked from a worker, must return token ids and
 * processed logprobs; otherwise the run is refused with what the server must be started with.
 */
export async function probePolicyBeforeRun(client: Client, req: PolicyProbeRequest, taskQueue = sharedQueue()): Promise<PolicyProbe> {
  return await client.workflow.execute('policyProbeWorkflow', {
    taskQueue, workflowId: `berth-policy-probe/${randomBytes(4).toString('hex')}`, args: [req],
    staticSummary: `probe policy ${req.model} at ${req.endpoint}`,
  }) as PolicyProbe;
}
