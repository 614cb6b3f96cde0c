import type { SandboxHandle } from '../sandbox/index.ts';
import type { SandboxRef, ServiceRef } from '../activities/types.ts';
import type { PhaseTargets } from './phase-network.ts';

/** A sandbox or service as histories written before the rename kept it (`container`, `containerId`). */
type Named = Pick<ServiceRef, 'user' | 'workdir'> & ({ name: string; id: string } | { container: string; containerId: string });

/** The provider's handle for a sandbox or service, from the plain data kept in workflow history (either shape). */
export const serviceHandle = (ref: Named): SandboxHandle => ('name' in ref
  ? { name: ref.name, containerId: ref.id, user: ref.user, workdir: ref.workdir }
  : { name: ref.container, containerId: ref.containerId, user: ref.user, workdir: ref.workdir });

export const handleOf = (ref: SandboxRef): SandboxHandle => serviceHandle(ref);

/** A group's services as handles (main included), from the plain data kept in workflow history. */
export const servicesOf = (ref: SandboxRef): Record<string, SandboxHandle> =>
  Object.fromEntries(Object.entries(ref.group?.services ?? {}).map(([name, s]) => [name, serviceHandle(s)]));

/** What a phase's network switch moves: the sandbox, or every service of its group still running after the seed. */
export const phaseTargets = (ref: SandboxRef): PhaseTargets => (ref.group
  ? { handles: Object.values(ref.group.services).filter((s) => !s.exited).map(serviceHandle), inGroup: true }
  : { handles: [handleOf(ref)], inGroup: false });
