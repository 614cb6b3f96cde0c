import type { SandboxHandle } from '../sandbox/index.ts';
import type { SandboxRef } from '../workflows/types.ts';

/** The provider's handle, rebuilt from the plain data kept in workflow history. */
export const handleOf = (ref: SandboxRef): SandboxHandle =>
  ({ name: ref.container, containerId: ref.containerId, user: ref.user, workdir: ref.workdir });
