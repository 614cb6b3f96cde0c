// The Docker provider's parts (SandboxProvider's images, network and finalStates), each over the engine's API.
import type Docker from 'dockerode';
import type { SandboxFinalStates, SandboxImages, SandboxNetwork } from '../provider.ts';
import { addressOf, imageIdOf, imageLabels, imagesLabelled, runOnce, tagImage } from './engine-images.ts';
import { keepFinalState, listFinalStates, removeFinalStates } from './final-state.ts';
import { readImageConfig } from './image-inspect.ts';
import { buildImage, ensureImage } from './images.ts';
import { applyPhaseNetwork, ensureEgressNetwork, holdsAddress } from './phase-network.ts';

export function dockerImages(docker: Docker, stateDir: string | undefined): SandboxImages {
  return {
    ensure: (ref, options) => ensureImage(docker, ref, options),
    config: (ref) => readImageConfig(docker, ref),
    build: (options) => buildImage(docker, { ...(stateDir ? { stateDir } : {}), ...options }),
    id: (ref) => imageIdOf(docker, ref),
    labels: (ref) => imageLabels(docker, ref),
    tag: (ref, repo, tag) => tagImage(docker, ref, repo, tag),
    labelled: (label) => imagesLabelled(docker, label),
    runOnce: (image, argv, o) => runOnce(docker, image, argv, o),
  };
}

export function dockerNetwork(docker: Docker): SandboxNetwork {
  return {
    egress: () => ensureEgressNetwork(docker),
    address: (container) => addressOf(docker, container),
    holds: (network, ip, container) => holdsAddress(docker, network, ip, container),
    applyPhase: (handle, want, opts) => applyPhaseNetwork(docker, handle, want, opts),
    defaultRanges: async () => {
      const info = (await docker.getNetwork('bridge').inspect()) as { IPAM?: { Config?: Array<{ Gateway?: string; Subnet?: string }> } };
      return (info.IPAM?.Config ?? []).map((c) => ({ gateway: c.Gateway || null, subnet: c.Subnet || null }));
    },
  };
}

export function dockerFinalStates(docker: Docker, retentionDays: number): SandboxFinalStates {
  return {
    retentionDays,
    keep: (container, ids) => keepFinalState(docker, container, ids, retentionDays),
    list: () => listFinalStates(docker),
    remove: (sel) => removeFinalStates(docker, sel, retentionDays),
  };
}
