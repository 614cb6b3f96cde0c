// Images for a sandbox whose engine pulls from a registry (Kubernetes): the engine beside the worker pulls, builds
// and overlays as on Docker, then each image is pushed to the registry and named by its digest there. That
// reference (`<registry>/berth/<name>@sha256:…`) is the image's id above the provider: prepare pins the batch to it,
// the pods pull it, and any worker reads its configuration from the registry without having the image itself.
import type { ImageConfig } from './image-config.ts';
import type { RegistryCredentials } from './registry-auth.ts';
import type { BuildImageOptions, BuildImageResult, EngineImage, EnsureImageOptions } from './image-types.ts';
import type { LocalImageEngine, SandboxImages } from './provider.ts';

/** The repository an image is pushed to: `<registry>/berth/<its name's last path component, without tag>`. */
export function registryRepository(registry: string, name: string): string {
  const bare = name.replace(/@.*$/, '').replace(/:[^/:]*$/, '');
  const last = bare.slice(bare.lastIndexOf('/') + 1);
  const clean = /^sha256$/i.test(last) || last === '' ? 'image' : last.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '');
  return `${registry}/berth/${clean || 'image'}`;
}

/** The tag a local image is pushed under: its id's first 16 hex digits (the same image always gets the same tag). */
export const registryTag = (imageId: string): string => imageId.replace(/^sha256:/, '').slice(0, 16);

export class RegistryImages implements SandboxImages {
  /** Local image id → its digest reference in the registry (one push per image per worker). */
  private readonly published = new Map<string, Promise<string>>();

  constructor(
    private readonly local: LocalImageEngine,
    readonly registry: string,
    /** An image's configuration as the registry has it (the driver's reader). */
    private readonly describe: (ref: string) => Promise<ImageConfig | null>,
    /** The registry's credentials (docker config.json `auths`), when it needs them. */
    private readonly credentials: RegistryCredentials | null = null,
  ) {}

  /** A reference by digest into this registry: what pods pull, answered from the registry alone. */
  isPinned(ref: string): boolean {
    return ref.startsWith(`${this.registry}/`) && ref.includes('@sha256:');
  }

  /** The local image pushed (once) and its configuration under the digest reference. */
  private async publish(name: string, config: ImageConfig): Promise<ImageConfig> {
    let ref = this.published.get(config.id);
    if (!ref) {
      ref = this.local.pushImage(config.id, registryRepository(this.registry, name), registryTag(config.id), this.credentials);
      this.published.set(config.id, ref);
      ref.catch(() => this.published.delete(config.id));
    }
    return { ...config, id: await ref };
  }

  private async pinned(ref: string): Promise<ImageConfig | null> {
    const config = await this.describe(ref);
    return config ? { ...config, id: ref } : null;
  }

  async ensure(ref: string, options?: EnsureImageOptions): Promise<ImageConfig> {
    if (this.isPinned(ref)) {
      const config = await this.pinned(ref);
      if (!config) throw new Error(`image ${ref} is not in the registry ${this.registry} any more; run \`berth prepare\` again`);
      return config;
    }
    return this.publish(ref, await this.local.images.ensure(ref, options));
  }

  async config(ref: string): Promise<ImageConfig | null> {
    if (this.isPinned(ref)) return this.pinned(ref);
    const config = await this.local.images.config(ref);
    return config ? this.publish(ref, config) : null;
  }

  async id(ref: string): Promise<string> {
    const config = await this.config(ref);
    if (!config) throw new Error(`no image ${ref} on this engine or in the registry ${this.registry}`);
    return config.id;
  }

  build(options: BuildImageOptions): Promise<BuildImageResult> {
    return this.local.images.build(options);
  }

  labels(ref: string): Promise<Record<string, string> | null> {
    return this.local.images.labels(ref);
  }

  tag(ref: string, repo: string, tag: string): Promise<void> {
    return this.local.images.tag(ref, repo, tag);
  }

  runOnce(image: string, argv: string[], o?: { user?: string; labels?: Record<string, string> }): Promise<{ exitCode: number; stdout: string }> {
    return this.local.images.runOnce(image, argv, o);
  }

  labelled(label: string): Promise<EngineImage[]> {
    return this.local.images.labelled(label);
  }
}
