// spec/multi-step-tasks.md § What is refused (and § Verification per step): separate verification, per-step
// workdir/, setup.sh, healthcheck and artifacts, naming the step; two steps may not share a name.
import { refuse } from '../errors.ts';
import { stepLayout, TASK_LAYOUT } from '../layout.ts';
import type { VerifierMode } from '../model.ts';
import type { TaskToml } from '../schema.ts';
import type { TaskSnapshot } from '../snapshot.ts';
import { stepVerifierMode } from '../verifier-mode.ts';
import { stepKey } from './keys.ts';

const file = TASK_LAYOUT.taskToml;

export function checkMultiStep(doc: TaskToml, snap: TaskSnapshot, taskMode: VerifierMode): void {
  const steps = doc.steps ?? [];
  if (taskMode === 'separate') {
    refuse({
      code: 'multi_step_separate_verifier',
      file,
      key: doc.verifier.environment !== undefined ? 'verifier.environment' : 'verifier.environment_mode',
      value: doc.verifier.environment !== undefined ? '[verifier.environment]' : 'separate',
      problem: 'a multi-step task verifies every step in the shared sandbox; a separate verifier is not run',
      fix: 'remove environment_mode = "separate" and [verifier.environment] so each step verifies in the agent\'s sandbox',
    });
  }
  for (const [i, s] of steps.entries()) {
    if (stepVerifierMode(s, taskMode) === 'separate') {
      const byTable = s.verifier.environment !== undefined && s.verifier.environment_mode === undefined;
      refuse({
        code: 'multi_step_separate_verifier',
        file,
        key: `${stepKey(i, s.name)}.verifier.${byTable ? 'environment' : 'environment_mode'}`,
        value: byTable ? '[steps.verifier.environment]' : 'separate',
        problem: `step "${s.name}" verifies in a separate sandbox, which multi-step tasks do not run`,
        fix: `remove environment_mode = "separate" and [steps.verifier.environment] from step "${s.name}"`,
      });
    }
  }
  const seen = new Set<string>();
  for (const [i, s] of steps.entries()) {
    if (seen.has(s.name)) {
      refuse({ code: 'invalid_value', file, key: `steps[${i}].name`, value: s.name, problem: 'two steps share this name', fix: 'give every step its own name (and folder)' });
    }
    seen.add(s.name);
    const paths = stepLayout(s.name);
    const feature = (what: string, where: { file?: string; key?: string; value?: unknown }, fix: string): never =>
      refuse({
        code: 'unsupported_step_feature',
        file: where.file ?? file,
        key: where.key ?? '',
        value: where.value,
        problem: `step "${s.name}" uses ${what}, which is not run yet`,
        fix,
      });
    if (snap.dirs.has(paths.workdirDir)) feature('a workdir/ folder', { file: `${paths.workdirDir}/` }, `move the files of ${paths.workdirDir}/ into the environment, or have the step's instruction create them`);
    if (snap.files.has(paths.setupSh)) feature('a setup.sh', { file: paths.setupSh }, 'remove the setup script, or do its work in the environment');
    if (s.healthcheck !== undefined) feature('a per-step healthcheck', { key: `${stepKey(i, s.name)}.healthcheck`, value: s.healthcheck.command }, 'move the check to [environment.healthcheck], or remove it');
    if (s.artifacts.length > 0) feature('per-step artifacts', { key: `${stepKey(i, s.name)}.artifacts`, value: s.artifacts }, 'move the paths to the top-level artifacts list, which is collected after every step');
  }
}
