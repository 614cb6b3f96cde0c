// Everything that runs on this host's sandbox queue (DESIGN.md section 3, Affinity), by the names workflows call.
import { installAgentLayer } from './agent-layer.ts';
import { withDeps, type ActivityDeps } from './deps.ts';
import { seed, teardown } from './host.ts';
import { hostArchiveChunk } from './host-files.ts';
import { openaiFinish, openaiModelCall, openaiStart, openaiToolCall } from './openai.ts';
import { prepareTask } from './prepare.ts';
import { regradeRefusal, regradeTurn } from './regrade.ts';
import { stepSetup } from './step-setup.ts';
import { agentTurn, verifyTurn } from './turn.ts';

export function createHostActivities(deps: ActivityDeps) {
  return {
    ...withDeps(deps, { seed, teardown, agentTurn, verifyTurn, stepSetup, prepareTask, openaiStart, openaiModelCall, openaiToolCall, openaiFinish, regradeTurn, regradeRefusal, installAgentLayer }),
    hostArchiveChunk,
  };
}

export type HostActivities = ReturnType<typeof createHostActivities>;
