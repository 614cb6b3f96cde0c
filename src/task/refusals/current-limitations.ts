// What Berth does not run yet (spec/task-folder-format.md § Current limitations, and Compose tasks, which wait for
// their own issue: DESIGN.md section 7). Each is refused with the reason, never run half-way.
import type { BuildContext } from '../build-context.ts';
import { refuse } from '../errors.ts';
import { TASK_LAYOUT } from '../layout.ts';
import type { TaskSnapshot } from '../snapshot.ts';

export function refuseCompose(snap: TaskSnapshot): void {
  for (const f of TASK_LAYOUT.environmentCompose) {
    if (snap.files.has(f)) {
      refuse({ code: 'compose_unsupported', file: f, key: '', problem: 'multi-container (Compose) tasks are not run yet', fix: 'run the task with a single environment/Dockerfile or docker_image, or wait for Compose support' });
    }
  }
}

/** A task that seeds the agent with a transcript runs only with the oracle. */
export function refuseTranscriptPairing(seedTrajectory: string | null, root: string, ctx: BuildContext): void {
  if (seedTrajectory === null || ctx.agent === undefined || ctx.agent === 'oracle' || ctx.allowUnsupportedPairing) return;
  refuse({
    code: 'unsupported_transcript',
    file: seedTrajectory.slice(root.length + 1),
    key: '',
    value: ctx.agent,
    problem: `the task seeds the agent with a transcript, which only the oracle runs (agent "${ctx.agent}")`,
    fix: 'run the task with --agent oracle, or remove the trajectory.json',
  });
}
