export type * from './types.ts';
export { DockerSandboxProvider } from './docker-provider.ts';
export { dockerFromEnv } from './docker-client.ts';
export { containerName, shellQuote, LABEL_BATCH, LABEL_ROLE, LABEL_WORKFLOW } from './names.ts';
export {
  SandboxLost,
  SeedFailed,
  ImageMissing,
  ImageBuildFailed,
  DetachedProcessLost,
  isLossError,
  type SeedFailureKind,
} from './errors.ts';
export { imageContentHash, imageTagForHash, readContextFiles, type ContextFile, type ImageHashInput } from './image-hash.ts';
export type { BuildImageOptions, BuildImageResult, EnsureImageOptions } from './images.ts';
export { ENTRYPOINT_OUTPUT, type EntrypointState } from './seed-phases.ts';
export { CLAIMS_DIR, DETACHED_BASE } from './detached.ts';
export { extractTar, inlineWriteScript } from './files.ts';
