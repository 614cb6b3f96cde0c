// What the host's services refuse, as errors of their own: src/activities/failures.ts turns each into the failure
// the workflow branches on, so nothing in this folder speaks Temporal.

/** An installed agent's episode on a host that has no layer of it over the task's image yet: install it, then seed. */
export class AgentLayerMissing extends Error {
  override readonly name = 'AgentLayerMissing';
}

/** The image's entrypoint died during the rollout (Task Folder Verifiers § Image entrypoint): the episode masks. */
export class EntrypointDied extends Error {
  override readonly name = 'EntrypointDied';
}
