// The verify layer's public API: the orchestration entry point and the pure pieces it is built from.
export { runVerification, WARNINGS_FILE } from './run-verification.ts';
export type { AtifTrajectory } from '../trajectory/index.ts';
export type { VerifyContext, VerifyNaming, VerifyNetwork, VerifyResult } from './context.ts';
export { clearTurnFiles } from './clear-turn.ts';
export { VerificationMasked } from './masked.ts';
export { copyEntrypointOutput } from './entrypoint-output.ts';
export { redact, redactFile, redactTree, secretValues, StreamRedactor, REDACTED } from '../trajectory/index.ts';
export { resolveVerifierImage, verifierImagesOf } from './verifier-image.ts';
export { turnVerifier } from './turn-settings.ts';
export type { TurnVerifier } from './turn-settings.ts';
export { scoreVerifierOutput, verifierOutputFromFiles, TIMEOUT_EXIT_CODES } from './reward.ts';
export type { RewardOutcome, VerifierOutput } from './reward.ts';
export { shimFiles, shimInputs, shimLayout } from './shim.ts';
export { responseFromText, responseText } from './response.ts';
export { copiedFromManifest, type CopiedArtifact } from './artifacts.ts';
