// Pure: what kind of Kubernetes API call a request line is, for the profile's table (ids and namespaces folded).
// Execs are told apart by what they run: tar over exec (files in, files out), the keep-alive check, a shell script
// (its first words) or a command.

export interface KubeCall { at: number; ms: number; method: string; path: string }

/** The argv an exec request carries (its repeated `command` query parameters). */
export function execArgv(path: string): string[] {
  const query = path.split('?')[1] ?? '';
  return new URLSearchParams(query).getAll('command');
}

/** A short name of what an exec runs. */
export function execLabel(argv: string[]): string {
  if (argv[0] === 'tar' && argv[1] === '-c') return 'tar-over-exec get';
  // The driver wraps a command (`sh -c <chdir> dir [env …] bash -c <script>`): the script follows the last -c.
  const c = argv.lastIndexOf('-c');
  const script = c >= 0 ? (argv[c + 1] ?? '') : argv.join(' ');
  if (/exec tar -x/.test(script)) return 'tar-over-exec put';
  if (/sleep infinity/.test(script) && /\/proc\//.test(script)) return 'keep-alive check';
  const firstLine = script.split('\n').map((l) => l.trim()).find((l) => l && l !== 'set -e') ?? '';
  return `script: ${firstLine.slice(0, 40)}`;
}

/** `GET pods/{name}`, `WATCH pods`, `PUT leases/{name}`, `EXEC tar-over-exec put`, … */
export function kubeCallKind(method: string, path: string): string {
  const [bare = '', query = ''] = path.split('?');
  const params = new URLSearchParams(query);
  const parts = bare.replace(/^\/(api\/v1|apis\/[^/]+\/[^/]+)/, '').split('/').filter(Boolean);
  if (parts[0] === 'namespaces' && parts.length > 2) parts.splice(0, 2);
  const [resource = bare || '/', name, sub] = parts;
  if (sub === 'exec') return `EXEC ${execLabel(execArgv(path))}`;
  // The keep-alive's channel (src/sandbox/kubernetes/pod-channel.ts): one per pod, its commands inside it.
  if (sub === 'attach') return 'ATTACH pods/{name}';
  const verb = params.get('watch') === 'true' || params.get('watch') === '1' ? 'WATCH' : method;
  return `${verb} ${resource}${name ? '/{name}' : ''}${sub ? `/${sub}` : ''}`;
}

/** Calls of each kind, with their summed time in ms, most frequent first. */
export function callsByKind(calls: KubeCall[]): Array<{ kind: string; n: number; ms: number }> {
  const by = new Map<string, { kind: string; n: number; ms: number }>();
  for (const c of calls) {
    const kind = kubeCallKind(c.method, c.path);
    const row = by.get(kind) ?? { kind, n: 0, ms: 0 };
    row.n++;
    row.ms += c.ms;
    by.set(kind, row);
  }
  return [...by.values()].sort((a, b) => b.n - a.n || a.kind.localeCompare(b.kind));
}
