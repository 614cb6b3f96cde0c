// The egress controller's image (egress-rules.ts): berth-base with iptables baked in from the worker host's own Debian
// packages (no package download: the site may be air-gapped, and berth-base is Debian bookworm as the host is), built
// by the engine beside the worker once per content and pushed to the cluster's registry like every task image.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** iptables and the libraries it loads (Debian bookworm names). */
export const IPTABLES_PACKAGES = ['iptables', 'libip4tc2', 'libip6tc2', 'libxtables12', 'libmnl0', 'libnetfilter-conntrack3', 'libnfnetlink0', 'libnftnl11'];
export const CONTROLLER_BASE = 'berth-base:bookworm';
export const CONTROLLER_REPOSITORY = 'berth-egress-controller';

export const controllerDockerfile = (base: string): string =>
  `FROM ${base}\nADD iptables.tar /\nRUN ldconfig && xtables-nft-multi iptables -V\nLABEL berth.egress-controller="1"\n`;

/** The files of `dpkg-query -L` output worth shipping: not documentation, not the root. */
export function packageFiles(listing: string): string[] {
  return [...new Set(listing.split('\n').map((l) => l.trim()))]
    .filter((p) => p.startsWith('/') && p !== '/.' && !p.startsWith('/usr/share/'))
    .map((p) => p.slice(1))
    .sort();
}

export interface ControllerImageDeps {
  buildImage(o: { contextDir: string; tag: string }): Promise<unknown>;
  /** The local image pushed to the cluster's registry: its digest reference. */
  publish(tag: string): Promise<string>;
}

/** Builds (once per content) and publishes the controller image; the reference pods pull, asked for on first need. */
export class ControllerImage {
  private ref: Promise<string> | null = null;

  constructor(private readonly deps: ControllerImageDeps, private readonly base = CONTROLLER_BASE) {}

  get(): Promise<string> {
    if (!this.ref) {
      this.ref = this.make();
      this.ref.catch(() => { this.ref = null; });
    }
    return this.ref;
  }

  private async make(): Promise<string> {
    let listing: string;
    try {
      listing = (await run('dpkg-query', ['-L', ...IPTABLES_PACKAGES])).stdout;
    } catch (err) {
      throw new Error(`the Kubernetes sandbox's no-network and allowlist phases need iptables on the worker's host (Debian: apt-get install iptables): ${(err as Error).message.split('\n')[0]}`);
    }
    const dir = mkdtempSync(join(tmpdir(), 'berth-egress-image-'));
    try {
      mkdirSync(dir, { recursive: true });
      const tar = join(dir, 'iptables.tar');
      // Symlinks kept as symlinks; directories only as entries (each of their files is listed itself).
      await run('tar', ['-C', '/', '--no-recursion', '-cf', tar, '--', ...packageFiles(listing)]);
      const dockerfile = controllerDockerfile(this.base);
      writeFileSync(join(dir, 'Dockerfile'), dockerfile);
      const hash = createHash('sha256').update(dockerfile).update(readFileSync(tar)).digest('hex').slice(0, 16);
      const tag = `${CONTROLLER_REPOSITORY}:${hash}`;
      await this.deps.buildImage({ contextDir: dir, tag });
      return await this.deps.publish(tag);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
}
