// Typed failures of a model call.

/** The conversation no longer fits the model's context window. Retrying the same request cannot help. */
export class ContextLengthExceeded extends Error {
  override readonly name = 'ContextLengthExceeded';
  constructor(
    readonly reason: string,
    readonly status: number,
  ) {
    super(reason);
  }
}

/** The endpoint kept failing (429, 5xx, network) and the attempts are spent. */
export class ModelCallFailed extends Error {
  override readonly name = 'ModelCallFailed';
  constructor(
    message: string,
    readonly attempts: number,
    readonly lastStatus: number | null,
  ) {
    super(message);
  }
}

/** The endpoint refused the request itself (4xx other than 429 and context length): a setting is wrong. */
export class ModelRequestRejected extends Error {
  override readonly name = 'ModelRequestRejected';
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
  }
}
