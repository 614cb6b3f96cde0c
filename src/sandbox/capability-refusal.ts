// What a task needs of the sandbox driver, against what the chosen driver declares (DriverCapabilities): a task that
// needs more is refused before any work, naming the capability and the fix. Read from capabilities, never from a
// driver's name, so a later driver is judged by what it says it can do.
import type { NetworkMode, Task } from '../task/model.ts';
import type { DriverCapabilities } from './driver.ts';

export interface MissingCapability {
  readonly capability: keyof DriverCapabilities;
  /** What in the task (or the run) needs it. */
  readonly because: string;
}

/** Every phase's network mode of the task: the baseline, each agent phase, each verifier phase. */
function phaseModes(task: Task): NetworkMode[] {
  const phases = task.multi_step ? task.steps.flatMap((s) => [s.agent.network_mode, s.verifier.network_mode]) : [task.agent.network_mode, task.verifier.network_mode];
  return [task.environment.network_mode, ...phases];
}

/** The tables of the task that ask for GPUs (the environment, a separate verifier's, a step's). */
function gpusOf(task: Task): string[] {
  const verifierEnvs = task.multi_step ? task.steps.map((s) => s.verifier.environment) : [task.verifier.environment];
  return [
    ...(task.environment.gpus ? [`[environment].gpus = ${task.environment.gpus}`] : []),
    ...verifierEnvs.flatMap((e) => (e?.gpus ? [`a verifier environment's gpus = ${e.gpus}`] : [])),
  ];
}

/** What the run asks beside the task: `--keep-final-state`, and whether its agent calls its model from inside the sandbox. */
export interface RunNeeds {
  keepFinalState?: boolean;
  /** The run's agent is one installed in the sandbox (claude-code, codex, …): its model calls go through the worker's gateway. */
  agentInSandbox?: string;
}

export function missingCapabilities(task: Task, caps: DriverCapabilities, run: RunNeeds = {}): MissingCapability[] {
  const missing: MissingCapability[] = [];
  const need = (capability: keyof DriverCapabilities, because: string) => {
    if (!caps[capability]) missing.push({ capability, because });
  };
  if (task.compose) need('groups', 'environment/docker-compose.yaml makes it a Compose group');
  const modes = phaseModes(task);
  if (modes.includes('no-network')) need('noNetwork', 'a phase has network_mode = "no-network"');
  if (modes.includes('allowlist')) need('allowlist', 'a phase has network_mode = "allowlist"');
  if (new Set(modes).size > 1) need('networkSwitching', `its phases switch network mode (${[...new Set(modes)].join(', ')})`);
  const verifiers = task.multi_step ? task.steps.map((s) => s.verifier) : [task.verifier];
  if (verifiers.some((v) => v.mode === 'separate')) need('stopStart', 'a separate verifier stops the agent\'s sandbox and keeps it for its artifacts');
  if (gpusOf(task).length > 0) need('gpus', `${gpusOf(task).join(' and ')} ask for GPUs`);
  if (run.keepFinalState) need('finalState', '--keep-final-state keeps each sandbox\'s final state as an image');
  if (run.agentInSandbox) need('modelGateway', `the agent ${run.agentInSandbox} calls its model from inside the sandbox, through the worker's gateway`);
  return missing;
}

/** The refusal for a task the driver cannot run, or null. */
export function capabilityRefusal(task: Task, caps: DriverCapabilities, driver: string, run: RunNeeds = {}): string | null {
  const missing = missingCapabilities(task, caps, run);
  if (missing.length === 0) return null;
  const what = missing.map((m) => `${m.capability} (${m.because})`).join('; ');
  return `task ${task.id} (${task.path}) needs what the ${driver} sandbox cannot do: ${what}; run it with the Docker sandbox (--sandbox docker)`;
}
