// The nop harness: does nothing (expected score 0), and still leaves a valid transcript: the user step alone.
import { userOnlyTrajectory, writeTrajectory } from './logs.ts';
import type { AgentHarness, AgentTurnContext, AgentTurnResult } from './types.ts';

export async function runNopTurn(ctx: AgentTurnContext): Promise<AgentTurnResult> {
  const trajectory = userOnlyTrajectory(ctx, 'nop');
  await writeTrajectory(ctx, trajectory);
  return { responseText: '', exitCode: null, timedOut: false, trajectory, timings: { agent: 0 } };
}

export const nopHarness: AgentHarness = { name: 'nop', runTurn: runNopTurn };
