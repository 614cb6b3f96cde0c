// Small edits of TOML text that keep everything else as written (comments, order): publishing drops a table or a
// key rather than re-serialising the user's file.

const HEADER = /^\s*\[\[?\s*([^\]]+?)\s*\]\]?\s*(#.*)?$/;

/** The text without the tables whose name is `table` or starts with `table.` (with their keys). */
export function dropTables(toml: string, table: string): string {
  const out: string[] = [];
  let dropping = false;
  for (const line of toml.split('\n')) {
    const h = HEADER.exec(line);
    if (h) {
      const name = h[1]!.replace(/\s/g, '');
      dropping = name === table || name.startsWith(`${table}.`);
    }
    if (!dropping) out.push(line);
  }
  const text = out.join('\n');
  return toml.endsWith('\n') && !text.endsWith('\n') ? `${text}\n` : text;
}

/** The text without `key = ...` (one line) in `[table]`; null when that line is not there. */
export function dropKey(toml: string, table: string, key: string): string | null {
  const lines = toml.split('\n');
  let current = '';
  const keyLine = new RegExp(`^\\s*${key}\\s*=`);
  for (let i = 0; i < lines.length; i++) {
    const h = HEADER.exec(lines[i]!);
    if (h) {
      current = h[1]!.replace(/\s/g, '');
      continue;
    }
    if (current === table && keyLine.test(lines[i]!)) {
      lines.splice(i, 1);
      return lines.join('\n');
    }
  }
  return null;
}
