// `--image-alias FROM=TO`: maps an image reference to another before anything else sees it
// (docs/design.md section 4, Images without a registry).

/** `ubuntu` → `ubuntu:latest`, `docker.io/library/ubuntu:24.04` → `ubuntu:24.04`. */
export function normaliseImageRef(ref: string): string {
  let r = ref.trim();
  for (const prefix of ['docker.io/', 'index.docker.io/', 'registry-1.docker.io/']) {
    if (r.startsWith(prefix)) r = r.slice(prefix.length);
  }
  if (r.startsWith('library/') && r.indexOf('/', 'library/'.length) < 0) r = r.slice('library/'.length);
  const lastSlash = r.lastIndexOf('/');
  const hasTag = r.indexOf(':', lastSlash + 1) >= 0;
  if (!hasTag && !r.includes('@')) r = `${r}:latest`;
  return r;
}

/** The alias target for `ref`, matched exactly or after Docker Hub normalisation; else `ref` itself. */
export function applyImageAlias(ref: string, aliases: Readonly<Record<string, string>> | undefined): string {
  if (!aliases) return ref;
  const exact = aliases[ref];
  if (exact !== undefined) return exact;
  const wanted = normaliseImageRef(ref);
  for (const [from, to] of Object.entries(aliases)) {
    if (normaliseImageRef(from) === wanted) return to;
  }
  return ref;
}

/** Parses `FROM=TO` command-line values into an alias map; throws on a malformed one. */
export function parseImageAliases(values: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const v of values) {
    const eq = v.indexOf('=');
    if (eq <= 0 || eq === v.length - 1) {
      throw new Error(`--image-alias ${JSON.stringify(v)}: expected FROM=TO, for example ubuntu:24.04=berth-base:bookworm`);
    }
    out[v.slice(0, eq).trim()] = v.slice(eq + 1).trim();
  }
  return out;
}
