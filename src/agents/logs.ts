// Host-side copies of a turn's agent logs: the transcript and the process output, under ctx.logsDir.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { buildTrajectory, userStep, type AtifTrajectory } from '../trajectory/atif.ts';
import type { AgentTurnContext } from './types.ts';
import { SANDBOX_LAYOUT } from '../task/index.ts';
import { SandboxLost } from '../sandbox/index.ts';

/** Where every harness's output lives inside the sandbox. */
export const AGENT_LOGS = SANDBOX_LAYOUT.agentLogs;
/** How much of an output file goes into a transcript or a response. */
export const OUTPUT_TAIL_BYTES = 64 * 1024;

export async function writeTrajectory(ctx: AgentTurnContext, trajectory: AtifTrajectory): Promise<void> {
  await writeFile(join(ctx.logsDir, 'trajectory.json'), `${JSON.stringify(trajectory, null, 2)}\n`);
}

/**
 * Copies a file from the sandbox into logsDir; false when it could not be read there (the process wrote nothing, or
 * the agent removed it or planted a file in the place of /logs/agent): a record only, never the turn's failure. Only a
 * lost sandbox throws.
 */
export async function copyLogToHost(ctx: AgentTurnContext, containerPath: string): Promise<boolean> {
  try {
    await ctx.provider.download(ctx.handle, containerPath, ctx.logsDir);
    return true;
  } catch (err) {
    if (err instanceof SandboxLost) throw err;
    return false;
  }
}

export function secondsSince(startMs: number): number {
  return Math.round((Date.now() - startMs) / 10) / 100;
}

/** A transcript with only the user's request: what nop and a turn without a solution leave. */
export function userOnlyTrajectory(ctx: AgentTurnContext, agentName: string, notes?: string): AtifTrajectory {
  return buildTrajectory({
    sessionId: ctx.runKey,
    agent: { name: agentName, version: '1.0.0' },
    steps: [userStep(ctx.instruction)],
    notes,
  });
}
