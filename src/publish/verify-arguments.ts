// The parameters `verify` declares, read from the module's source without running it (nemo_gym.data.tasks.harbor.python_verifier,
// `declared_arguments`): publishing refuses a verifier that declares `response`, which Harbor cannot supply.

const DEF_VERIFY = /^(?:async\s+)?def\s+verify\s*\(/m;

/** The text between the parentheses that open at `start`, skipping strings and nested brackets; null if unclosed. */
function balanced(src: string, start: number): string | null {
  let depth = 0;
  for (let i = start; i < src.length; i++) {
    const c = src[i]!;
    if (c === '"' || c === "'") {
      const triple = src.startsWith(c.repeat(3), i);
      const end = src.indexOf(triple ? c.repeat(3) : c, i + (triple ? 3 : 1));
      if (end < 0) return null;
      i = end + (triple ? 2 : 0);
    } else if (c === '#') {
      const nl = src.indexOf('\n', i);
      i = nl < 0 ? src.length : nl;
    } else if (c === '(' || c === '[' || c === '{') depth++;
    else if (c === ')' || c === ']' || c === '}') {
      depth--;
      if (depth === 0) return src.slice(start + 1, i);
    }
  }
  return null;
}

/** The text with each string literal emptied and each comment removed, so brackets and commas in them do not count. */
function withoutStringsAndComments(src: string): string {
  let out = '';
  for (let i = 0; i < src.length; i++) {
    const c = src[i]!;
    if (c === '"' || c === "'") {
      const triple = src.startsWith(c.repeat(3), i);
      const end = src.indexOf(triple ? c.repeat(3) : c, i + (triple ? 3 : 1));
      i = end < 0 ? src.length : end + (triple ? 2 : 0);
      out += '""';
    } else if (c === '#') {
      const nl = src.indexOf('\n', i);
      i = nl < 0 ? src.length : nl - 1;
    } else out += c;
  }
  return out;
}

function splitTopLevel(params: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let cur = '';
  for (const c of params) {
    if (c === '(' || c === '[' || c === '{') depth++;
    if (c === ')' || c === ']' || c === '}') depth--;
    if (c === ',' && depth === 0) {
      out.push(cur);
      cur = '';
    } else cur += c;
  }
  out.push(cur);
  return out.map((p) => p.trim()).filter((p) => p !== '');
}

/** The names of verify's parameters (`*args`, `**kwargs` as `args`, `kwargs`), or null without a module-level `def verify`. */
export function declaredArguments(source: string): string[] | null {
  const m = DEF_VERIFY.exec(source);
  if (!m) return null;
  const inner = balanced(source, m.index + m[0].length - 1);
  if (inner === null) return null;
  return splitTopLevel(withoutStringsAndComments(inner))
    .filter((p) => p !== '/' && p !== '*')
    .map((p) => /^\**\s*([A-Za-z_][A-Za-z0-9_]*)/.exec(p)?.[1] ?? p);
}
