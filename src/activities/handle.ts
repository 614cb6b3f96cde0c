import type { SandboxHandle } from '../sandbox/index.ts';
import type { SandboxRef } from '../workflows/types.ts';

/** The provider's handle, rebuilt from the plain data kept in workflow history. */
export const handleOf = (ref: SandboxRef): SandboxHandle =>
  ({ name: ref.container, containerId: ref.containerId, user: ref.user, workdir: ref.workdir });

/** A group's services as handles (main included), from the plain data kept in workflow history. */
export const servicesOf = (ref: SandboxRef): Record<string, SandboxHandle> =>
  Object.fromEntries(Object.entries(ref.group?.services ?? {}).map(([name, s]) => [
    name, { name: s.container, containerId: s.containerId, user: s.user, workdir: s.workdir },
  ]));
