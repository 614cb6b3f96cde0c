import { agentArgsOf, AgentConfigError, installedAgent } from '../agents/index.ts';
import { probeModel, probePolicyEndpoint } from '../gateway/index.ts';
import { BAD_AGENT_ARGS } from '../outcomes/index.ts';
import type { HostServices } from './deps.ts';
import type { PolicyProbe, PolicyProbeRequest, ProbeResult } from '../activities/types.ts';
import { modelOf, upstreamOf } from './model-gateway.ts';

/**
 * Shared queue, before a batch starts: the agent's arguments checked against its documented options, then one small
 * call through this worker's gateway with the key it holds, so a bad argument, a bad key or an unknown model stops
 * the batch before any sandbox starts. Rate limits are retried by the gateway.
 */
export async function probeAgentModel(deps: HostServices, req: { agent: string; model?: string; agentArgs?: Record<string, string> }): Promise<ProbeResult> {
  const agent = installedAgent(req.agent);
  if (!agent) return { ok: true, status: 0 };
  try {
    agentArgsOf(agent, req.agentArgs ?? {});
  } catch (err) {
    if (err instanceof AgentConfigError) return { ok: false, kind: BAD_AGENT_ARGS, status: 0, reason: err.message };
    throw err;
  }
  let m;
  try {
    m = modelOf({ model: req.model, agentArgs: req.agentArgs ?? {} }, agent);
  } catch (err) {
    return { ok: false, kind: 'agent:unknown_model', status: 0, reason: (err as Error).message };
  }
  return probeModel(await deps.gateway.get(), { provider: m.provider, protocol: agent.protocol(m.provider), model: m.model, upstream: upstreamOf(m.provider) });
}

/**
 * Shared queue, before a rollout run starts: the trainer's policy endpoint, asked from a worker (the host whose
 * gateways will call it, holding the key `apiKeyVar` names), must return token ids and processed logprobs.
 */
export async function probePolicy(_deps: HostServices, req: PolicyProbeRequest): Promise<PolicyProbe> {
  const key = req.apiKeyVar ? process.env[req.apiKeyVar] : undefined;
  if (req.apiKeyVar && !key) return { ok: false, reason: `the worker has no ${req.apiKeyVar} set (policy.api_key_var names the worker's environment variable holding the endpoint's key)` };
  return probePolicyEndpoint(req.endpoint, req.model, key);
}
