// A Compose task whose main says `network_mode: "none"` (compose.ts): main runs on no network in every phase, as on
// Harbor's Docker environment, where the task's own networking on main is kept whatever a phase's policy says. Berth
// holds every phase that runs in main at the group's baseline then: a phase policy of its own would switch main's
// networks, and a container on none has none to switch (the engine refuses to connect it).
import type { NetworkPolicy, Step, Task } from './model.ts';
import { samePolicy } from './network.ts';

type Phases = Pick<Task, 'environment' | 'agent' | 'verifier' | 'steps'>;

/** `task`'s phases in main at its baseline; `warn` names each phase policy that is set aside. */
export function phasesAtBaseline<T extends Phases>(task: T, file: string, warn: (m: string) => void): T {
  const base: NetworkPolicy = { network_mode: task.environment.network_mode, allowed_hosts: task.environment.allowed_hosts };
  const pin = <P extends NetworkPolicy>(p: P, where: string): P => {
    if (samePolicy(p, base)) return p;
    warn(`task.toml: the ${where} phase's network_mode = "${p.network_mode}" does not reach main, which ${file} gives network_mode "none" (no network in any phase, as under Harbor); the phase keeps the group's baseline, "${base.network_mode}".`);
    return { ...p, network_mode: base.network_mode, allowed_hosts: base.allowed_hosts };
  };
  const steps = task.steps.map((s): Step => ({
    ...s,
    agent: pin(s.agent, `step "${s.name}" agent`),
    verifier: s.verifier.environment === null ? pin(s.verifier, `step "${s.name}" verifier`) : s.verifier,
  }));
  return {
    ...task,
    agent: pin(task.agent, 'agent'),
    verifier: task.verifier.environment === null ? pin(task.verifier, 'verifier') : task.verifier,
    steps,
  };
}
