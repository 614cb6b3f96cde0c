// Everything that runs on this host's sandbox queue (docs/design.md section 3, Affinity), by the names workflows call.
import { installAgentLayer } from './agent-layer.ts';
import type { HostServices } from '../host/deps.ts';
import { withDeps } from './with-deps.ts';
import { EpisodeFilesHome } from './files-home.ts';
import { seed, teardown } from './host.ts';
import { hostArchiveChunk, hostFilesPut } from './host-files.ts';
import { openaiFinish, openaiModelCall, openaiStart, openaiToolCall } from './openai.ts';
import { openaiTurn } from './openai-turn.ts';
import { prepareTask } from './prepare.ts';
import { regradeRefusal, regradeTurn } from './regrade.ts';
import { seedThenAgentTurn } from './seed-then-agent.ts';
import { stepSetup } from './step-setup.ts';
import { storeEpisodeFiles } from './store-files.ts';
import { agentTurn, verifyTurn } from './turn.ts';
import type { SandboxRef } from './types.ts';

/**
 * `workflowQueue`: the shared queue this worker runs workflows on. Where the sandbox queue is shared by several
 * machines (deps.identity.filesQueue is set), a turn's activities on a worker that does not keep the episode's files
 * work on a copy brought from the one that does (src/activities/files-home.ts).
 */
export function createHostActivities(deps: HostServices, opts: { workflowQueue?: string } = {}) {
  const bound = withDeps(deps, { seed, seedThenAgentTurn, teardown, agentTurn, verifyTurn, stepSetup, prepareTask, openaiStart, openaiModelCall, openaiToolCall, openaiFinish, openaiTurn, regradeTurn, regradeRefusal, installAgentLayer, storeEpisodeFiles });
  const home = opts.workflowQueue && deps.identity.filesQueue ? new EpisodeFilesHome(deps.identity, opts.workflowQueue) : undefined;
  const onFiles = <Req extends { sandbox: SandboxRef }, R>(fn: (req: Req) => Promise<R>) =>
    home ? (req: Req) => home.around(req.sandbox, (sandbox) => fn({ ...req, sandbox })) : fn;
  return {
    ...bound,
    agentTurn: onFiles(bound.agentTurn),
    verifyTurn: onFiles(bound.verifyTurn),
    stepSetup: onFiles(bound.stepSetup),
    hostArchiveChunk,
    hostFilesPut,
  };
}

export type HostActivities = ReturnType<typeof createHostActivities>;
