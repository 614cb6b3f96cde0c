// Task Folder Format § What the loader refuses, Unsupported settings: Windows, TPU, and a shared verifier
// with its own environment. Every network Harbor allows runs (docs/design.md section 7, Network; src/task/network.ts).
import { refuse } from '../errors.ts';
import { TASK_LAYOUT } from '../layout.ts';
import type { EnvironmentToml, TaskToml } from '../schema.ts';
import { checkMcpServers } from './invalid-values.ts';

const file = TASK_LAYOUT.taskToml;

export function checkEnvironmentSupport(e: EnvironmentToml | undefined, key: string): void {
  if (!e) return;
  if (e.os === 'windows') {
    refuse({ code: 'unsupported_os', file, key: `${key}.os`, value: 'windows', problem: 'Windows tasks are not supported', fix: 'use a Linux image and remove os, or set os = "linux"' });
  }
  if (e.tpu !== undefined) {
    refuse({ code: 'unsupported_tpu', file, key: `${key}.tpu`, value: e.tpu, problem: 'TPU tasks are not supported', fix: 'remove the tpu table' });
  }
  checkMcpServers(e, key);
}

/** Every environment table of the task: [environment], [verifier.environment] and each step's. */
export function checkEnvironmentsSupport(doc: TaskToml): void {
  checkEnvironmentSupport(doc.environment, 'environment');
  checkEnvironmentSupport(doc.verifier.environment, 'verifier.environment');
  for (const [i, s] of (doc.steps ?? []).entries()) checkEnvironmentSupport(s.verifier.environment, `steps[${i}].verifier.environment`);
}

/** `key`: `verifier`, or a step's `steps[0]("a").verifier`. */
export function refuseSharedVerifierWithEnvironment(key: string): never {
  return refuse({
    code: 'shared_verifier_with_environment',
    file,
    key: `${key}.environment`,
    value: 'environment_mode = "shared"',
    problem: 'a shared verifier runs in the agent\'s sandbox and cannot have its own environment',
    fix: `remove [${key.startsWith('steps') ? 'steps.verifier' : 'verifier'}.environment], or set environment_mode = "separate"`,
  });
}
