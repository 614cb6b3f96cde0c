// tests/docker-compose.yaml for a separate verifier (spec/task-folder-verifiers.md § Shared and
// separate verification; spec/separate-verifier-environment.md). Only `services`, `name`, `version`
// and `x-` keys at the top, only service `main`, and `main` may set `image`, `build`, `pull_policy`
// (a prebuilt verifier image: only a `pull_policy` other than `build`). No YAML library is a
// dependency, so this reads the block-style outline those rules need and refuses anything else.

export interface ComposeOutline {
  topKeys: string[];
  services: Map<string, Map<string, string>>;
}

function stripComment(line: string): string {
  let quote: string | null = null;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (quote) {
      if (c === quote) quote = null;
    } else if (c === '"' || c === "'") quote = c;
    else if (c === '#' && (i === 0 || /\s/.test(line[i - 1]!))) return line.slice(0, i);
  }
  return line;
}

function scalar(text: string): string {
  const t = text.trim();
  if (t.length >= 2 && ((t.startsWith('"') && t.endsWith('"')) || (t.startsWith("'") && t.endsWith("'")))) return t.slice(1, -1);
  return t;
}

const KEY = /^([A-Za-z0-9_.-]+|"[^"]*"|'[^']*'):(?:\s+(.*))?$/;

/** The outline of a block-style compose file, or a reason it cannot be read. */
export function readComposeOutline(text: string): ComposeOutline | { unreadable: string } {
  const topKeys: string[] = [];
  const services = new Map<string, Map<string, string>>();
  let top: string | null = null;
  let serviceIndent = -1;
  let currentService: Map<string, string> | null = null;
  let keyIndent = -1;
  for (const [i, rawLine] of text.split(/\r?\n/).entries()) {
    const line = stripComment(rawLine).replace(/\s+$/, '');
    if (line.trim() === '' || line.trim() === '---') continue;
    if (line.includes('\t')) return { unreadable: `line ${i + 1} is indented with a tab` };
    const indent = line.length - line.trimStart().length;
    const body = line.trimStart();
    if (indent === 0) {
      const m = KEY.exec(body);
      if (!m) return { unreadable: `line ${i + 1} is not a "key:" line at the top level` };
      top = scalar(m[1]!);
      topKeys.push(top);
      serviceIndent = -1;
      currentService = null;
      if (top === 'services' && m[2] !== undefined && m[2].trim() !== '' && m[2].trim() !== '{}') {
        return { unreadable: 'services is not a block mapping' };
      }
      continue;
    }
    if (top !== 'services') continue;
    if (serviceIndent < 0) serviceIndent = indent;
    if (indent === serviceIndent) {
      const m = KEY.exec(body);
      if (!m) return { unreadable: `line ${i + 1} is not a service name` };
      currentService = new Map();
      services.set(scalar(m[1]!), currentService);
      keyIndent = -1;
      continue;
    }
    if (indent < serviceIndent) return { unreadable: `line ${i + 1} is indented inconsistently` };
    if (!currentService) return { unreadable: `line ${i + 1} is not under a service` };
    if (keyIndent < 0) keyIndent = indent;
    if (indent === keyIndent) {
      const m = KEY.exec(body);
      if (!m) {
        if (body.startsWith('- ')) continue;
        return { unreadable: `line ${i + 1} is not a "key:" line` };
      }
      currentService.set(scalar(m[1]!), m[2] !== undefined ? scalar(m[2]) : '');
    }
  }
  return { topKeys, services };
}

export interface VerifierComposeMain {
  image: string | null;
  build: boolean;
  pull_policy: string | null;
}

/** Null when the file is acceptable (with what `main` sets), else the reason it is refused. */
export function checkVerifierCompose(
  text: string,
  prebuilt: boolean,
): { ok: true; main: VerifierComposeMain | null } | { ok: false; key: string; value?: unknown; problem: string } {
  const outline = readComposeOutline(text);
  if ('unreadable' in outline) return { ok: false, key: '', problem: `the file cannot be read (${outline.unreadable})` };
  for (const key of outline.topKeys) {
    if (!['services', 'name', 'version'].includes(key) && !key.startsWith('x-')) {
      return { ok: false, key, problem: 'only services, name, version and x- keys may sit at the top of a verifier compose file' };
    }
  }
  for (const name of outline.services.keys()) {
    if (name !== 'main') return { ok: false, key: `services.${name}`, problem: 'verifier sidecars are not run; only service main is allowed' };
  }
  const main = outline.services.get('main');
  if (!main) return { ok: true, main: null };
  const allowed = prebuilt ? ['pull_policy'] : ['image', 'build', 'pull_policy'];
  for (const key of main.keys()) {
    if (!allowed.includes(key)) {
      return {
        ok: false,
        key: `services.main.${key}`,
        problem: prebuilt
          ? 'beside a prebuilt verifier image, main may only set pull_policy'
          : 'main may only set image, build and pull_policy',
      };
    }
  }
  const pullPolicy = main.get('pull_policy') ?? null;
  if (prebuilt && pullPolicy === 'build') {
    return { ok: false, key: 'services.main.pull_policy', value: 'build', problem: 'a prebuilt verifier image cannot be built' };
  }
  return { ok: true, main: { image: main.get('image') || null, build: main.has('build'), pull_policy: pullPolicy } };
}
