export type * from './types.ts';
export { DockerSandboxProvider } from './docker/provider.ts';
export { dockerFromEnv } from './docker/client.ts';
export { mkdirUnlessThere, removeIfThere } from './shell-lines.ts';
export { containerName, shellQuote, LABEL_BATCH, LABEL_POOL, LABEL_ROLE, LABEL_USER, LABEL_WORKDIR, LABEL_WORKFLOW, POOL_NAME_PREFIX } from './names.ts';
export {
  SandboxLost,
  SeedFailed,
  SandboxNeverReady,
  ImageMissing,
  ImageBuildFailed,
  DetachedProcessLost,
  CommandNotStarted,
  type SeedFailureKind,
} from './errors.ts';
export { imageContentHash, imageTagForHash, readContextFiles, type ContextFile, type ImageHashInput } from './image-hash.ts';
export type { BuildImageOptions, BuildImageResult, EngineImage, EnsureImageOptions } from './image-types.ts';
export { healthcheckFromImage, keepAliveEntrypoint, type ImageConfig } from './image-config.ts';
export { aliasFromLines, pinnedAgentImage, prepareAgentImage, prepareVerifierImage, type PreparedImage } from './image-prep.ts';
export { taskHealthcheck, withImageRuntime, type ImageRuntimeInput } from './image-runtime.ts';
export { cpuHints, CPU_HINT_VARIABLES } from './cpu-hints.ts';
export { gpuDeviceRequests, type DeviceRequest } from './gpus.ts';
export { ENTRYPOINT_OUTPUT, type EntrypointState } from './seed-phases.ts';
export { CLAIMS_DIR, DETACHED_BASE } from './detached.ts';
export { extractTar, inlineWriteScript } from './files.ts';
export { finalStateImage, keepFinalState, listFinalStates, removeFinalStates } from './docker/final-state.ts';
export { retentionDays, type GcSelection, type KeptState } from './final-states.ts';
export { groupProjectName } from './group-names.ts';
export { pollHealthcheck } from './seed-phases.ts';
export { EGRESS_NETWORK, type ApplyNetworkOptions, type EgressNetwork, type PhaseNetwork } from './network-phase.ts';
export { applyPhaseNetwork, ensureEgressNetwork, holdsAddress } from './docker/phase-network.ts';
export { EgressPolicies, EgressProxy, type EgressPolicy } from './egress-proxy.ts';
export type { DriverCapabilities, SandboxDriver } from './driver.ts';
export { capabilityRefusal, missingCapabilities, type MissingCapability } from './capability-refusal.ts';
export { KubernetesSandboxProvider, type KubernetesProviderOptions } from './kubernetes/provider.ts';
export { DriverSandboxProvider } from './driver-provider.ts';
export type { LocalImageEngine, SandboxProvider } from './provider.ts';
export type { SlotRecord, SlotStore } from './slot-store.ts';
export type { ClusterStatus } from './cluster-status.ts';
