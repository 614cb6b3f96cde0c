// Everything that runs on the shared queue: planning, picking a host, model calls, preparing, by the names workflows call.
import type { HostServices } from '../host/deps.ts';
import { withDeps } from './with-deps.ts';
import { probeAgentModel, probePolicy } from '../host/model-probe.ts';
import { openaiModelCall } from './openai.ts';
import { pickHost } from './pick-host.ts';
import { prepareTasksHere } from './prepare.ts';
import { planRegrade } from './regrade-plan.ts';
import { hostLease, planAndPickHost, planAndTryHost, planEpisodeActivity } from './shared.ts';

export function createSharedActivities(deps: HostServices) {
  return withDeps(deps, { planEpisode: planEpisodeActivity, pickHost, planAndPickHost, planAndTryHost, hostLease, openaiModelCall, prepareTasksHere, probeAgentModel, probePolicy, planRegrade });
}

export type SharedActivities = ReturnType<typeof createSharedActivities>;
