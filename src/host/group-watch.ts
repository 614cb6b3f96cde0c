// What becomes of a Compose group's sidecars during the rollout (issue 22; docs/design.md section 3, sandbox loss). Only
// loss masks: a sidecar whose container is gone, or an engine that stops answering. A sidecar that exits on its own
// is an outcome of the rollout (the agent may have caused it): code 0 is a one-shot service done, any other code
// (SIGKILL's 137 and an OOM kill too: Berth cannot tell who sent it) is a note on the row with the code and the log
// tail, and the episode is scored. The agent's turn watches for loss while it runs; verification looks once more.
import { setTimeout as sleep } from 'node:timers/promises';
import { SandboxLost, type SandboxProvider } from '../sandbox/index.ts';
import type { SandboxRef } from '../activities/types.ts';
import { serviceHandle } from './handle.ts';

const WATCH_MS = 5_000;

export interface GroupState {
  /** Why the group is lost (a sidecar's container gone), or null. */
  lost: string | null;
  /** One per sidecar that exited non-zero since the seed: its code and the tail of its log. */
  notes: string[];
}

export async function groupState(provider: SandboxProvider, ref: SandboxRef, withLogs = true): Promise<GroupState> {
  const notes: string[] = [];
  for (const [name, s] of Object.entries(ref.group?.services ?? {})) {
    if (name === 'main' || s.exited) continue;
    try {
      const handle = serviceHandle(s);
      const info = await provider.inspect(handle);
      if (info.running || info.exitCode === 0) continue;
      const how = `exit code ${info.exitCode ?? 'unknown'}${info.oomKilled ? ', out of memory' : ''}`;
      const tail = withLogs ? `; the last lines of its log:\n${await provider.logTail(handle)}` : '';
      notes.push(`sidecar "${name}" exited during the rollout (${how})${tail}`);
    } catch (err) {
      if (err instanceof SandboxLost) return { lost: `sidecar "${name}" was removed during the rollout`, notes };
      throw err;
    }
  }
  return { lost: null, notes };
}

/** The notes of the group's sidecars; SandboxLost when one of them is gone. */
export async function groupNotes(provider: SandboxProvider, ref: SandboxRef): Promise<string[]> {
  const state = await groupState(provider, ref);
  if (state.lost) throw new SandboxLost(ref.group!.project, new Error(state.lost));
  return state.notes;
}

/** Rejects with SandboxLost as soon as a sidecar is gone; resolves never (until aborted). */
export async function watchGroup(provider: SandboxProvider, ref: SandboxRef, signal: AbortSignal): Promise<never> {
  for (;;) {
    await sleep(WATCH_MS, undefined, { signal });
    const state = await groupState(provider, ref, false);
    if (state.lost) throw new SandboxLost(ref.group!.project, new Error(state.lost));
  }
}
