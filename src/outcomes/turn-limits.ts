/**
 * A turn that times out: how long past its budget a turn whose calls a trainer's drain held may run (src/agents/moving-deadline.ts): the
 * in-sandbox `timeout` of an installed agent in training mode, and the turn activity's Temporal limit. Workflow-safe.
 */
export const HELD_BACKSTOP_SEC = 3600;
