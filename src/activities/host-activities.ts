// Everything that runs on this host's sandbox queue (DESIGN.md section 3, Affinity).
export { seed, teardown } from './host.ts';
export { agentTurn, verifyTurn } from './turn.ts';
export { stepSetup } from './step-setup.ts';
export { prepareTask } from './prepare.ts';
export { openaiStart, openaiToolCall, openaiFinish } from './openai.ts';
export { regradeTurn } from './regrade.ts';
export { installAgentLayer } from './agent-layer.ts';
