// Dockerfile modes: pull, overlay or build (spec/task-folder-format.md § Dockerfile modes; the exact
// rules are reference/nemo-gym-behaviour.md section 3.4). Pure: text in, classification out.
import { posix } from 'node:path';

export type DockerfileMode = 'pull' | 'overlay' | 'build';

export interface DockerfileInstruction {
  keyword: 'FROM' | 'WORKDIR' | 'ENV' | 'USER' | 'RUN';
  /** The instruction's arguments as written (continuations joined). */
  args: string;
  /** 1-based line the instruction starts on. */
  line: number;
}

/** A RUN line with the settings in effect at its position in the file. */
export interface RunLine {
  command: string;
  env: Readonly<Record<string, string>>;
  workdir: string | null;
  user: string | null;
  line: number;
}

export interface DockerfileClassification {
  mode: DockerfileMode;
  /** Why the file needs a build (null in pull and overlay modes). */
  buildReason: string | null;
  /** The FROM image as written (null when there is none or it could not be read). */
  from: string | null;
  /** Final WORKDIR (relative ones joined onto the previous; a leading relative one stays relative). */
  workdir: string | null;
  /** ENV in effect at the end, in expandable form (`$VAR` resolved against the base image later: expandDockerfileValue). */
  env: Readonly<Record<string, string>>;
  user: string | null;
  runs: readonly RunLine[];
  /** FROM, WORKDIR, ENV, USER and RUN in file order (pull and overlay modes). */
  instructions: readonly DockerfileInstruction[];
  /** `ENTRYPOINT []`: start the image without its entrypoint. */
  entrypointCleared: boolean;
}

interface Logical {
  keyword: string;
  args: string;
  line: number;
}

/** Joins `\` continuations; blank and `#` lines are dropped, even inside a continuation. */
export function logicalLines(text: string): Logical[] {
  const lines = text.split(/\r?\n/);
  const out: Logical[] = [];
  let current: string | null = null;
  let start = 0;
  for (let i = 0; i < lines.length; i++) {
    const raw = lines[i]!;
    const trimmed = raw.trim();
    if (trimmed === '' || trimmed.startsWith('#')) continue;
    const continues = /\\\s*$/.test(raw);
    const body = continues ? raw.replace(/\\\s*$/, '') : raw;
    if (current === null) {
      current = body.trimStart();
      start = i + 1;
    } else {
      current += body;
    }
    if (!continues) {
      out.push(split(current, start));
      current = null;
    }
  }
  if (current !== null) out.push(split(current, start));
  return out;
}

function split(instruction: string, line: number): Logical {
  const m = /^(\S+)\s*([\s\S]*)$/.exec(instruction.trim());
  return { keyword: (m?.[1] ?? '').toUpperCase(), args: (m?.[2] ?? '').trim(), line };
}

/**
 * Splits ENV words the way Docker does, removing quotes but keeping what expansion needs: the
 * result is in "expandable" form, where a backslash makes the next character literal and `$NAME` /
 * `${NAME}` are references (single-quoted text is escaped so it stays literal). See expandDockerfileValue.
 */
export function shellWords(text: string): string[] | null {
  const words: string[] = [];
  let word = '';
  let inWord = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === "'") {
      const end = text.indexOf("'", i + 1);
      if (end < 0) return null;
      word += text.slice(i + 1, end).replace(/[\\$]/g, (m) => `\\${m}`);
      i = end;
      inWord = true;
    } else if (c === '"') {
      let j = i + 1;
      for (; j < text.length && text[j] !== '"'; j++) {
        if (text[j] === '\\' && j + 1 < text.length) {
          // Inside double quotes only \", \$ and \\ are escapes; another backslash stays literal.
          const next = text[j + 1]!;
          word += next === '"' || next === '$' || next === '\\' ? `\\${next}` : `\\\\${next}`;
          j++;
        } else word += text[j];
      }
      if (j >= text.length) return null;
      i = j;
      inWord = true;
    } else if (c === '\\' && i + 1 < text.length) {
      word += `\\${text[i + 1]!}`;
      i++;
      inWord = true;
    } else if (c === ' ' || c === '\t' || c === '\n' || c === '\r') {
      if (inWord) words.push(word);
      word = '';
      inWord = false;
    } else {
      word += c;
      inWord = true;
    }
  }
  if (inWord) words.push(word);
  return words;
}

/**
 * Resolves an ENV value in expandable form against the environment accumulated so far (the base
 * image's, then earlier ENV lines): `$NAME`, `${NAME}` and `${NAME:-default}` expand (unset is
 * empty), and a backslash makes the next character literal.
 */
export function expandDockerfileValue(value: string, env: Readonly<Record<string, string | undefined>>): string {
  let out = '';
  for (let i = 0; i < value.length; i++) {
    const c = value[i]!;
    if (c === '\\' && i + 1 < value.length) {
      out += value[i + 1];
      i++;
    } else if (c === '$') {
      const braced = /^\$\{([A-Za-z_][A-Za-z0-9_]*)(?::([-+])([^}]*))?\}/.exec(value.slice(i));
      const bare = braced ? null : /^\$([A-Za-z_][A-Za-z0-9_]*)/.exec(value.slice(i));
      if (braced) {
        const v = env[braced[1]!];
        if (braced[2] === '-') out += v === undefined || v === '' ? braced[3]! : v;
        else if (braced[2] === '+') out += v === undefined || v === '' ? '' : braced[3]!;
        else out += v ?? '';
        i += braced[0].length - 1;
      } else if (bare) {
        out += env[bare[1]!] ?? '';
        i += bare[0].length - 1;
      } else out += c;
    } else out += c;
  }
  return out;
}

function shellQuote(arg: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`;
}

function unquote(text: string): string {
  const t = text.trim();
  if (t.length >= 2 && ((t.startsWith('"') && t.endsWith('"')) || (t.startsWith("'") && t.endsWith("'")))) {
    return t.slice(1, -1);
  }
  return t;
}

const HEREDOC = /(^|[^<])<<-?\s*(["']?)[A-Za-z_][A-Za-z0-9_]*\2(?!<)/;

function execForm(args: string): string[] | null | 'not-json' {
  if (!args.startsWith('[')) return 'not-json';
  try {
    const parsed: unknown = JSON.parse(args);
    if (!Array.isArray(parsed) || !parsed.every((a) => typeof a === 'string')) return null;
    return parsed as string[];
  } catch {
    return null;
  }
}

/** Parses ENV arguments: legacy `KEY rest of line` (kept as written), else `KEY=value` pairs in expandable form. */
export function parseEnvArgs(args: string): Array<[string, string]> | null {
  const first = /^(\S+)/.exec(args)?.[1] ?? '';
  if (first !== '' && !first.includes('=')) {
    const rest = args.slice(first.length).trim();
    return [[first, rest]];
  }
  const words = shellWords(args);
  if (words === null || words.length === 0) return null;
  const pairs: Array<[string, string]> = [];
  for (const w of words) {
    const eq = w.indexOf('=');
    if (eq <= 0) return null;
    pairs.push([w.slice(0, eq), w.slice(eq + 1)]);
  }
  return pairs;
}

function build(reason: string, partial: Partial<DockerfileClassification> = {}): DockerfileClassification {
  return {
    mode: 'build',
    buildReason: reason,
    from: partial.from ?? null,
    workdir: null,
    env: {},
    user: null,
    runs: [],
    instructions: [],
    entrypointCleared: false,
  };
}

const PULL_KEYWORDS = new Set(['WORKDIR', 'ENV', 'USER', 'LABEL', 'RUN', 'CMD', 'ENTRYPOINT']);

export function classifyDockerfile(text: string): DockerfileClassification {
  const lines = logicalLines(text);
  if (lines.length === 0 || lines[0]!.keyword !== 'FROM') {
    return build(lines.length === 0 ? 'the file has no FROM' : `line ${lines[0]!.line}: ${lines[0]!.keyword} before FROM`);
  }
  const fromLine = lines[0]!;
  const fromTokens = fromLine.args.split(/\s+/).filter((t) => t !== '' && !t.startsWith('--'));
  const image = fromTokens[0] ?? '';
  if (image === '') return build(`line ${fromLine.line}: FROM names no image`);
  if (image.includes('$')) return build(`line ${fromLine.line}: FROM uses a variable`, { from: image });
  if (!(fromTokens.length === 1 || (fromTokens.length === 3 && fromTokens[1]!.toUpperCase() === 'AS'))) {
    return build(`line ${fromLine.line}: FROM has extra words`, { from: image });
  }

  let workdir: string | null = null;
  let user: string | null = null;
  const env: Record<string, string> = {};
  const runs: RunLine[] = [];
  let entrypointCleared = false;
  const instructions: DockerfileInstruction[] = [{ keyword: 'FROM', args: fromLine.args, line: fromLine.line }];

  for (const l of lines.slice(1)) {
    const at = `line ${l.line}`;
    if (l.keyword === 'FROM') return build(`${at}: a second FROM (multi-stage build)`, { from: image });
    if (!PULL_KEYWORDS.has(l.keyword)) {
      return build(`${at}: ${l.keyword} needs a build`, { from: image });
    }
    switch (l.keyword) {
      case 'LABEL':
        break;
      case 'CMD': {
        const form = execForm(l.args);
        if (!(Array.isArray(form) && form.length === 0)) return build(`${at}: a non-empty CMD needs a build`, { from: image });
        break;
      }
      case 'ENTRYPOINT': {
        const form = execForm(l.args);
        if (!(Array.isArray(form) && form.length === 0)) {
          return build(`${at}: a non-empty ENTRYPOINT needs a build`, { from: image });
        }
        entrypointCleared = true;
        break;
      }
      case 'WORKDIR': {
        const dir = unquote(l.args);
        if (dir === '') return build(`${at}: empty WORKDIR`, { from: image });
        workdir = posix.isAbsolute(dir) || workdir === null ? dir : posix.join(workdir, dir);
        if (posix.isAbsolute(workdir)) workdir = posix.normalize(workdir);
        instructions.push({ keyword: 'WORKDIR', args: l.args, line: l.line });
        break;
      }
      case 'USER': {
        const u = unquote(l.args);
        if (u === '') return build(`${at}: empty USER`, { from: image });
        user = u;
        instructions.push({ keyword: 'USER', args: l.args, line: l.line });
        break;
      }
      case 'ENV': {
        const pairs = parseEnvArgs(l.args);
        if (pairs === null) return build(`${at}: ENV is not KEY=value`, { from: image });
        for (const [k, v] of pairs) env[k] = v;
        instructions.push({ keyword: 'ENV', args: l.args, line: l.line });
        break;
      }
      case 'RUN': {
        if (l.args === '') return build(`${at}: empty RUN`, { from: image });
        if (l.args.startsWith('--')) return build(`${at}: RUN with BuildKit flags`, { from: image });
        let command: string;
        const form = execForm(l.args);
        if (form === 'not-json') {
          if (HEREDOC.test(l.args)) return build(`${at}: heredoc RUN`, { from: image });
          command = l.args;
        } else if (form === null || form.length === 0 || form.some((a) => a === '')) {
          return build(`${at}: RUN exec form is not a list of non-empty strings`, { from: image });
        } else {
          command = form.map(shellQuote).join(' ');
        }
        runs.push({ command, env: { ...env }, workdir, user, line: l.line });
        instructions.push({ keyword: 'RUN', args: l.args, line: l.line });
        break;
      }
    }
  }
  return {
    mode: runs.length > 0 ? 'overlay' : 'pull',
    buildReason: null,
    from: image,
    workdir,
    env,
    user,
    runs,
    instructions,
    entrypointCleared,
  };
}
