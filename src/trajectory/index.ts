// ATIF trajectories (types, builders, validation) and redaction of secret values: a bottom module, import-free of
// the rest of src (docs/design.md section 2), so agents and verify both use it without importing each other.
export * from './atif.ts';
export { redact, redactFile, redactTree, secretValues, StreamRedactor, REDACTED } from './redact.ts';
