// An image's configuration read from its registry (Registry HTTP API v2, as the Distribution spec defines it):
// the manifest for the reference (a platform's entry when it is an index), then its config blob. The cluster pulls
// from the registry, so the registry, not an engine beside the worker, is where a pod's image is described.
import { imageConfigOf, type EngineImageConfig, type ImageConfig } from '../image-config.ts';
import { basicAuth, parseChallenge, tokenUrl, type RegistryCredentials } from '../registry-auth.ts';

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

/** Credentials for a registry host, or null to ask anonymously. */
export type CredentialsFor = (host: string) => RegistryCredentials | null;

export class RegistryReader {
  /** An authorization that worked, per host and repository: later reads send it at once. */
  private readonly authorized = new Map<string, string>();

  constructor(private readonly arch: string = platformArch(), private readonly credentials: CredentialsFor = () => null) {}

  private async fetchOnce(url: string, accept: string[], host: string, authorization?: string): Promise<Response> {
    try {
      return await fetch(url, { headers: { accept: accept.join(', '), ...(authorization ? { authorization } : {}) } });
    } catch (err) {
      throw new Error(`registry ${host} cannot be reached (${url}): ${(err as Error).message}`);
    }
  }

  /** The authorization a 401's challenge asks for: basic with the credentials, or a bearer token from its realm (with them, else anonymous). */
  private async answer(ref: RegistryRef, challengeHeader: string | null): Promise<string | null> {
    const challenge = challengeHeader ? parseChallenge(challengeHeader) : null;
    const creds = this.credentials(ref.host);
    if (challenge?.scheme === 'basic') return creds ? basicAuth(creds) : null;
    if (challenge?.scheme !== 'bearer') return null;
    const url = tokenUrl(challenge);
    const res = await this.fetchOnce(url, ['application/json'], ref.host, creds ? basicAuth(creds) : undefined);
    // Refused by the token service as by the registry: the caller says which credentials were refused and the fix.
    if (res.status === 401 || res.status === 403) return null;
    if (!res.ok) throw new Error(`registry ${ref.host}: its token service ${url} answered HTTP ${res.status}${creds ? ' to the credentials given' : ' to an anonymous request'}: ${(await res.text()).slice(0, 300)}`);
    const body = (await res.json()) as { token?: string; access_token?: string };
    const token = body.token ?? body.access_token;
    if (!token) throw new Error(`registry ${ref.host}: its token service ${url} answered no token`);
    return `Bearer ${token}`;
  }

  private async get(ref: RegistryRef, path: string, accept: string[]): Promise<Response | null> {
    const url = `${registryBaseUrl(ref.host)}/v2/${ref.repository}/${path}`;
    const key = `${ref.host}/${ref.repository}`;
    let res = await this.fetchOnce(url, accept, ref.host, this.authorized.get(key));
    if (res.status === 401) {
      const authorization = await this.answer(ref, res.headers.get('www-authenticate'));
      if (authorization) {
        await res.body?.cancel();
        res = await this.fetchOnce(url, accept, ref.host, authorization);
        if (res.ok) this.authorized.set(key, authorization);
      }
    }
    if (res.status === 404) return null;
    if (res.status === 401 || res.status === 403) {
      const has = this.credentials(ref.host) !== null;
      throw new Error(`registry ${ref.host} refuses ${has ? 'the credentials given for' : 'anonymous reads of'} ${ref.repository} (HTTP ${res.status}): ` +
        (has ? 'check them (docker login ' + ref.host + ')' : `run \`docker login ${ref.host}\` (or set [kubernetes].docker_config to a config.json with auths for it)`));
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
