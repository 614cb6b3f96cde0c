// An image's configuration read from its registry (Registry HTTP API v2, as the Distribution spec defines it):
// the manifest for the reference (a platform's entry when it is an index), then its config blob. The cluster pulls
// from the registry, so the registry, not an engine beside the worker, is where a pod's image is described.
import { imageConfigOf, type EngineImageConfig, type ImageConfig } from '../image-config.ts';

/** An image reference split as a registry addresses it. */
export interface RegistryRef {
  /** host[:port] of the registry API. */
  readonly host: string;
  readonly repository: string;
  /** A tag or a `sha256:…` digest. */
  readonly reference: string;
}

const DOCKER_HUB = 'registry-1.docker.io';

/** Splits `host/repo:tag`, `host/repo@sha256:…` or a Docker Hub short name (`debian:bookworm`) as Docker does. */
export function parseImageRef(ref: string): RegistryRef {
  let rest = ref;
  let reference = 'latest';
  const at = rest.indexOf('@');
  if (at >= 0) {
    reference = rest.slice(at + 1);
    rest = rest.slice(0, at);
  }
  const slash = rest.indexOf('/');
  const first = slash >= 0 ? rest.slice(0, slash) : '';
  const hasHost = slash >= 0 && (first.includes('.') || first.includes(':') || first === 'localhost');
  const host = hasHost ? first : DOCKER_HUB;
  let repository = hasHost ? rest.slice(slash + 1) : rest;
  const colon = repository.lastIndexOf(':');
  if (colon >= 0) {
    if (at < 0) reference = repository.slice(colon + 1);
    repository = repository.slice(0, colon);
  }
  if (!repository) throw new Error(`image reference ${JSON.stringify(ref)} names no repository`);
  if (host === DOCKER_HUB && !repository.includes('/')) repository = `library/${repository}`;
  return { host, repository, reference };
}

/** Plain HTTP for a loopback registry, as the Docker engine allows without configuration; TLS for any other. */
export function registryBaseUrl(host: string): string {
  const name = host.replace(/:\d+$/, '');
  const loopback = name === 'localhost' || /^127\./.test(name) || name === '[::1]';
  return `${loopback ? 'http' : 'https'}://${host}`;
}

const MANIFEST = ['application/vnd.oci.image.manifest.v1+json', 'application/vnd.docker.distribution.manifest.v2+json'];
const INDEX = ['application/vnd.oci.image.index.v1+json', 'application/vnd.docker.distribution.manifest.list.v2+json'];

interface Manifest {
  mediaType?: string;
  config?: { digest?: string };
  manifests?: Array<{ digest: string; platform?: { os?: string; architecture?: string } }>;
}

/** The registry's name for this machine's architecture (Go's GOARCH, as image indexes spell it). */
export function platformArch(nodeArch: string = process.arch): string {
  return ({ x64: 'amd64', arm64: 'arm64', arm: 'arm', ppc64: 'ppc64le', s390x: 's390x' } as Record<string, string>)[nodeArch] ?? nodeArch;
}

/** An index's entry for linux on `arch`; null when it has none. */
export function platformEntry(index: Manifest, arch: string): string | null {
  return index.manifests?.find((m) => m.platform?.os === 'linux' && m.platform.architecture === arch)?.digest ?? null;
}

export class RegistryReader {
  constructor(private readonly arch: string = platformArch()) {}

  private async get(ref: RegistryRef, path: string, accept: string[]): Promise<Response | null> {
    const url = `${registryBaseUrl(ref.host)}/v2/${ref.repository}/${path}`;
    let res: Response;
    try {
      res = await fetch(url, { headers: { accept: accept.join(', ') } });
    } catch (err) {
      throw new Error(`registry ${ref.host} cannot be reached for ${ref.repository} (${url}): ${(err as Error).message}`);
    }
    if (res.status === 404) return null;
    if (res.status === 401 || res.status === 403) {
      throw new Error(`registry ${ref.host} refuses anonymous reads of ${ref.repository} (HTTP ${res.status}): Berth reads only registries without auth so far; ` +
        'push the image to the registry in berth.toml [kubernetes].registry');
    }
    if (!res.ok) throw new Error(`registry ${ref.host}: GET ${url} answered HTTP ${res.status}: ${(await res.text()).slice(0, 300)}`);
    return res;
  }

  /** The image's configuration, its id the config blob's digest (Docker's image id); null when the registry has no such image. */
  async imageConfiguration(image: string): Promise<ImageConfig | null> {
    const ref = parseImageRef(image);
    let res = await this.get(ref, `manifests/${ref.reference}`, [...MANIFEST, ...INDEX]);
    if (!res) return null;
    let manifest = (await res.json()) as Manifest;
    if (INDEX.includes(manifest.mediaType ?? '') || (!manifest.config && manifest.manifests)) {
      const digest = platformEntry(manifest, this.arch);
      if (!digest) throw new Error(`image ${image} has no linux/${this.arch} entry in its index on ${ref.host}`);
      res = await this.get(ref, `manifests/${digest}`, MANIFEST);
      if (!res) return null;
      manifest = (await res.json()) as Manifest;
    }
    const digest = manifest.config?.digest;
    if (!digest) throw new Error(`image ${image}: the manifest on ${ref.host} names no config blob (media type ${manifest.mediaType ?? 'none'})`);
    const blob = await this.get(ref, `blobs/${digest}`, ['application/json', '*/*']);
    if (!blob) return null;
    const config = (await blob.json()) as { config?: EngineImageConfig };
    return imageConfigOf(digest, config.config);
  }
}
