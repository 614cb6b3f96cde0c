// Dockerfile modes: pull, overlay or build (Task Folder Format § Dockerfile modes; the exact
// rules are NeMo Gym 0.7 section 3.4). Pure: text in, classification out.
import { posix } from 'node:path';

export type DockerfileMode = 'pull' | 'overlay' | 'build';

export interface DockerfileInstruction {
  keyword: 'FROM' | 'WORKDIR' | 'ENV' | 'USER' | 'RUN';
  /** The instruction's arguments as written (continuations joined). */
  args: string;
  /** 1-based line the instruction starts on. */
  line: number;
}

/** A RUN line with the settings in effect at its position in the file (its environment: resolveDockerfileEnv). */
export interface RunLine {
  command: string;
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
  /**
   * The last value each ENV line gives a key, as written (quotes, `$` references). For display only: the
   * environment a sandbox gets is resolveDockerfileEnv over `instructions`, against the base image's.
   */
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

/** A Dockerfile word Berth does not resolve itself: the file then goes to Docker as a build, which resolves it. */
export class DockerfileWordError extends Error {
  override readonly name = 'DockerfileWordError';
}

/**
 * Splits instruction arguments into words the way Docker's parser does (BuildKit `parseWords`): on
 * whitespace outside quotes, keeping quotes and backslashes in the words for the word processing that
 * follows (expandDockerfileValue). A backslash outside single quotes keeps the next character in the word.
 */
export function dockerWords(text: string): string[] {
  const words: string[] = [];
  let word = '';
  let inWord = false;
  let quote: string | null = null;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quote === null && /\s/.test(c)) {
      if (inWord) words.push(word);
      word = '';
      inWord = false;
      continue;
    }
    inWord = true;
    if (c === '\\' && quote !== "'") {
      if (i + 1 === text.length) continue;
      word += c + text[++i]!;
      continue;
    }
    if (quote === null && (c === "'" || c === '"')) quote = c;
    else if (c === quote) quote = null;
    word += c;
  }
  if (inWord) words.push(word);
  return words;
}

const SPECIAL_PARAMS = new Set(['@', '*', '#', '?', '-', '$', '!', '0']);
const NAME_CHAR = /[\p{L}\p{Nd}_]/u;

/**
 * Docker's word processing (BuildKit's shell lexer) for one ENV, WORKDIR or USER value: single quotes are
 * literal, double quotes keep `$` expansion and treat only \", \$ and \\ as escapes, a backslash elsewhere
 * makes the next character literal, and `$NAME`, `${NAME}`, `${NAME:-word}` and `${NAME:+word}` expand against
 * `env` (the environment in effect before the instruction; unset is empty; `word` is processed the same way).
 * Throws DockerfileWordError for what Docker engines resolve differently or refuse (`${NAME-word}`, `${NAME?}`,
 * `${NAME#…}`, `${NAME/…}`, an unclosed quote or brace).
 */
export function expandDockerfileValue(value: string, env: Readonly<Record<string, string | undefined>>): string {
  return new WordLexer(value, env).word(null);
}

class WordLexer {
  private i = 0;
  constructor(
    private readonly s: string,
    private readonly env: Readonly<Record<string, string | undefined>>,
  ) {}

  word(stop: '}' | null): string {
    let out = '';
    while (this.i < this.s.length) {
      const c = this.s[this.i]!;
      if (c === stop) {
        this.i++;
        return out;
      }
      if (c === '$') out += this.dollar();
      else if (c === "'") out += this.singleQuoted();
      else if (c === '"') out += this.doubleQuoted();
      else if (c === '\\') {
        this.i += 2;
        if (this.i <= this.s.length) out += this.s[this.i - 1]!;
      } else {
        out += c;
        this.i++;
      }
    }
    if (stop !== null) throw new DockerfileWordError(`missing '}' in ${JSON.stringify(this.s)}`);
    return out;
  }

  private singleQuoted(): string {
    const end = this.s.indexOf("'", this.i + 1);
    if (end < 0) throw new DockerfileWordError(`unclosed single quote in ${JSON.stringify(this.s)}`);
    const text = this.s.slice(this.i + 1, end);
    this.i = end + 1;
    return text;
  }

  private doubleQuoted(): string {
    let out = '';
    this.i++;
    for (;;) {
      if (this.i >= this.s.length) throw new DockerfileWordError(`unclosed double quote in ${JSON.stringify(this.s)}`);
      const c = this.s[this.i]!;
      if (c === '"') {
        this.i++;
        return out;
      }
      if (c === '$') {
        out += this.dollar();
        continue;
      }
      this.i++;
      if (c === '\\') {
        const next = this.s[this.i];
        if (next === undefined) continue;
        if (next === '"' || next === '$' || next === '\\') {
          out += next;
          this.i++;
          continue;
        }
      }
      out += c;
    }
  }

  private name(): string {
    const first = this.s[this.i];
    if (first === undefined) return '';
    if (/\p{Nd}/u.test(first)) {
      const digits = /^\p{Nd}+/u.exec(this.s.slice(this.i))![0];
      this.i += digits.length;
      return digits;
    }
    if (SPECIAL_PARAMS.has(first)) {
      this.i++;
      return first;
    }
    let name = '';
    while (this.i < this.s.length && NAME_CHAR.test(this.s[this.i]!)) name += this.s[this.i++]!;
    return name;
  }

  private dollar(): string {
    this.i++;
    if (this.s[this.i] !== '{') {
      const name = this.name();
      return name === '' ? '$' : (this.env[name] ?? '');
    }
    this.i++;
    const first = this.s[this.i];
    if (first === undefined || first === '{' || first === '}' || first === ':') {
      throw new DockerfileWordError(`bad substitution in ${JSON.stringify(this.s)}`);
    }
    const name = this.name();
    const op = this.s[this.i++];
    const value = this.env[name];
    if (op === '}') return value ?? '';
    const modifier = op === ':' ? `:${this.s[this.i++] ?? ''}` : (op ?? '');
    if (modifier !== ':-' && modifier !== ':+') {
      throw new DockerfileWordError(`\${${name}${modifier}…} in ${JSON.stringify(this.s)}: only \${NAME}, \${NAME:-word} and \${NAME:+word} resolve the same on every Docker engine`);
    }
    const word = this.word('}');
    const empty = value === undefined || value === '';
    if (modifier === ':-') return empty ? word : value;
    return empty ? '' : word;
  }
}

function shellQuote(arg: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`;
}

/**
 * A WORKDIR or USER value with Docker's quotes and escapes removed, or why Berth leaves the file to a build
 * (a `$` reference would need the base image's environment at that line: Docker resolves it when it builds).
 */
function settingWord(args: string): { value: string } | { reason: string } {
  if (args.includes('$')) return { reason: 'uses a variable' };
  try {
    return { value: expandDockerfileValue(args, {}).trim() };
  } catch (err) {
    return { reason: (err as Error).message };
  }
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

/**
 * Parses ENV arguments as Docker's parser does: legacy `KEY rest of line` (one value, spaces kept), else
 * `KEY=value` words. Values stay as written (quotes, escapes, `$` references) for resolveDockerfileEnv; null
 * when Docker would refuse the line or a key is not a plain name.
 */
export function parseEnvArgs(args: string): Array<[string, string]> | null {
  const words = dockerWords(args);
  if (words.length === 0) return null;
  let pairs: Array<[string, string]>;
  if (!words[0]!.includes('=')) {
    const legacy = /^(\S+)\s+([\s\S]+)$/.exec(args.trim());
    if (!legacy) return null;
    pairs = [[legacy[1]!, legacy[2]!]];
  } else {
    pairs = [];
    for (const w of words) {
      const eq = w.indexOf('=');
      if (eq < 0) return null;
      pairs.push([w.slice(0, eq), w.slice(eq + 1)]);
    }
  }
  return pairs.every(([k]) => /^[^\s"'$\\=]+$/.test(k)) ? pairs : null;
}

/** The environment Docker builds from a file: the base image's, then each line's values in order. */
export interface ResolvedDockerfileEnv {
  /** The image's whole environment after the last ENV line (base entries first, as Docker orders Config.Env). */
  env: Record<string, string>;
  /** For each RUN line in file order, the environment in effect at that line. */
  runs: Array<Record<string, string>>;
}

/**
 * Docker's ENV semantics over a pull- or overlay-mode file's instructions: every ENV line counts, and each
 * line's values are expanded against the environment in effect before that line (so `ENV X=2 Y=$X` gives Y the
 * earlier X), starting from the base image's environment. The one resolver of Dockerfile ENV values.
 */
export function resolveDockerfileEnv(
  instructions: readonly DockerfileInstruction[],
  baseEnv: Readonly<Record<string, string>>,
): ResolvedDockerfileEnv {
  let env: Record<string, string> = { ...baseEnv };
  const runs: Array<Record<string, string>> = [];
  for (const ins of instructions) {
    if (ins.keyword === 'RUN') runs.push({ ...env });
    if (ins.keyword !== 'ENV') continue;
    const pairs = parseEnvArgs(ins.args);
    if (pairs === null) throw new DockerfileWordError(`line ${ins.line}: ENV is not KEY=value`);
    const before = env;
    env = { ...env };
    for (const [k, raw] of pairs) env[k] = expandDockerfileValue(raw, before);
  }
  return { env, runs };
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

/** `# escape=…` among the leading comment lines (Docker's parser directives) changes the escape character. */
function hasEscapeDirective(text: string): boolean {
  for (const line of text.split(/\r?\n/)) {
    if (!/^\s*#/.test(line)) return false;
    if (/^\s*#\s*escape\s*=/i.test(line)) return true;
  }
  return false;
}

export function classifyDockerfile(text: string): DockerfileClassification {
  if (hasEscapeDirective(text)) return build('an escape parser directive (Docker resolves the file when it builds it)');
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
        const word = settingWord(l.args);
        if ('reason' in word) return build(`${at}: WORKDIR ${word.reason}`, { from: image });
        const dir = word.value;
        if (dir === '') return build(`${at}: empty WORKDIR`, { from: image });
        workdir = posix.isAbsolute(dir) || workdir === null ? dir : posix.join(workdir, dir);
        if (posix.isAbsolute(workdir)) workdir = posix.normalize(workdir);
        instructions.push({ keyword: 'WORKDIR', args: l.args, line: l.line });
        break;
      }
      case 'USER': {
        const word = settingWord(l.args);
        if ('reason' in word) return build(`${at}: USER ${word.reason}`, { from: image });
        const u = word.value;
        if (u === '') return build(`${at}: empty USER`, { from: image });
        user = u;
        instructions.push({ keyword: 'USER', args: l.args, line: l.line });
        break;
      }
      case 'ENV': {
        const pairs = parseEnvArgs(l.args);
        if (pairs === null) return build(`${at}: ENV is not KEY=value`, { from: image });
        for (const [k, v] of pairs) {
          try {
            expandDockerfileValue(v, {});
          } catch (err) {
            return build(`${at}: ENV ${k}: ${(err as Error).message}`, { from: image });
          }
          env[k] = v;
        }
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
        runs.push({ command, workdir, user, line: l.line });
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
