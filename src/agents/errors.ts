// Typed failures of the harnesses. Each has a stable `name` an activity can map to an ApplicationFailure
// type, and a message that says what to do.

/** A harness was started with a missing or bad --agent-arg: the run's settings are wrong. */
export class AgentConfigError extends Error {
  override readonly name = 'AgentConfigError';
}

/** `[solution].env` names a `${VAR}` that is not set on this worker. */
export class SolutionEnvUnset extends Error {
  override readonly name = 'SolutionEnvUnset';
  constructor(
    readonly variable: string,
    readonly taskPath: string,
  ) {
    super(
      `${taskPath}/task.toml: [solution].env needs the variable ${variable}, which is not set on this worker. ` +
        `Set ${variable} in the worker's environment (or give it a default with \${${variable}:-value}).`,
    );
  }
}
