// Multi-Step Harbor Tasks: two steps may not share a name; a step verifier made shared cannot declare its own
// environment (as Harbor refuses it); separate_verifier_for_artifacts cannot force a multi-step task that declares
// artifacts into separate mode (§ Verification per step). Per-step separate verification, workdir/, setup.sh,
// healthcheck and artifacts run as Harbor runs them (docs/departures.md).
import type { BuildContext } from '../build-context.ts';
import { refuse } from '../errors.ts';
import { TASK_LAYOUT } from '../layout.ts';
import type { TaskToml } from '../schema.ts';
import { stepKey } from './keys.ts';
import { refuseSharedVerifierWithEnvironment } from './unsupported-settings.ts';

export function checkMultiStep(doc: TaskToml, ctx: BuildContext): void {
  const steps = doc.steps ?? [];
  const seen = new Set<string>();
  for (const [i, s] of steps.entries()) {
    if (seen.has(s.name)) {
      refuse({ code: 'invalid_value', file: TASK_LAYOUT.taskToml, key: `steps[${i}].name`, value: s.name, problem: 'two steps share this name', fix: 'give every step its own name (and folder)' });
    }
    seen.add(s.name);
    if (s.verifier.environment_mode === 'shared' && s.verifier.environment !== undefined) refuseSharedVerifierWithEnvironment(`${stepKey(i, s.name)}.verifier`);
  }
  const declares = doc.artifacts.length > 0 || steps.some((s) => s.artifacts.length > 0);
  if (ctx.separateVerifierForArtifacts && declares) {
    refuse({
      code: 'separate_verifier_for_artifacts',
      file: ctx.configFile ?? 'berth.toml',
      key: 'episode.separate_verifier_for_artifacts',
      value: true,
      problem: 'the option verifies tasks that declare artifacts separately, which cannot apply to a multi-step task (each step declares its own verifier)',
      // Both fixes load (test/task/multi-step.test.ts); a step's own environment_mode = "separate" would not: the task
      // still declares artifacts.
      fix: `set separate_verifier_for_artifacts = false under [episode] in ${ctx.configFile ?? 'berth.toml'} (or run from a folder whose berth.toml does not set it) for this dataset, ` +
        'or remove the artifacts of the task and of every step from task.toml',
    });
  }
}
