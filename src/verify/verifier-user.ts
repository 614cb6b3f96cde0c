// Who test.sh runs as (Task Folder Verifiers § Users): [verifier].user, else the user the image starts with,
// never [agent].user; with no record of the image's user and [agent].user set, root.
import type { SandboxHandle, SandboxProvider } from '../sandbox/index.ts';
import type { Task } from '../task/index.ts';

/** Shared mode: the user test.sh runs as in the agent's sandbox. */
export async function sharedVerifierUser(
  provider: SandboxProvider,
  agent: SandboxHandle,
  task: Task,
  explicitUser: string | null,
  knownImageUser: string | null | undefined,
): Promise<string> {
  if (explicitUser !== null) return explicitUser;
  // The sandbox was seeded without an agent user, so its default user is the image's own.
  if (task.agent.user === null) return agent.user;
  // A bare docker_image has no configuration on record.
  if (task.image.mode === 'prebuilt') return 'root';
  if (task.image.user) return task.image.user;
  if (knownImageUser !== undefined) return knownImageUser || 'root';
  const config = await provider.images.config((await provider.inspect(agent)).image);
  return config?.user || 'root';
}

/**
 * Separate mode: the `user` to seed the verifier's sandbox with, or undefined to take the image's own user
 * (the seed reads it from the image).
 */
export function separateVerifierSeedUser(task: Task, explicitUser: string | null, imageOnRecord: boolean): string | undefined {
  if (explicitUser !== null) return explicitUser;
  if (!imageOnRecord && task.agent.user !== null) return 'root';
  return undefined;
}
