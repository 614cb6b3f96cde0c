// Secret redaction (docs/design.md section 7, Secrets): resolved `[secrets]` and `${VAR}` values never appear in what
// verification returns or in the log files Berth copies out. Files are redacted streaming, so a 50 MB
// test-stdout.txt never sits in memory.

import { createReadStream, createWriteStream } from 'node:fs';
import { lstat, readdir, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { once } from 'node:events';

export const REDACTED = '[REDACTED]';

/** The distinct non-empty values to hide, longest first (so a value containing another is hidden whole). */
export function secretValues(secrets: Readonly<Record<string, string>> | readonly string[]): string[] {
  const list = Array.isArray(secrets) ? secrets : Object.values(secrets);
  return [...new Set(list.filter((v) => typeof v === 'string' && v.length > 0))].sort((a, b) => b.length - a.length);
}

/** `text` with every occurrence of every secret value replaced by `[REDACTED]`. */
export function redact(text: string, secrets: Readonly<Record<string, string>> | readonly string[]): string {
  let out = text;
  for (const value of secretValues(secrets)) out = out.split(value).join(REDACTED);
  return out;
}

/**
 * Byte-level redaction over a stream of chunks. Bytes that could be the start of a value cut by a chunk
 * boundary are held back (at most the longest value's length minus one) until the next chunk decides them.
 */
export class StreamRedactor {
  private readonly needles: Buffer[];
  private readonly keep: number;
  private carry: Buffer = Buffer.alloc(0);
  private readonly marker = Buffer.from(REDACTED);

  constructor(values: readonly string[]) {
    this.needles = secretValues(values).map((v) => Buffer.from(v, 'utf8'));
    this.keep = Math.max(0, ...this.needles.map((n) => n.length - 1));
  }

  push(chunk: Buffer): Buffer {
    return this.scan(Buffer.concat([this.carry, chunk]), false);
  }

  end(): Buffer {
    return this.scan(this.carry, true);
  }

  private scan(data: Buffer, final: boolean): Buffer {
    const safeEnd = final ? data.length : Math.max(0, data.length - this.keep);
    const parts: Buffer[] = [];
    let pos = 0;
    for (;;) {
      let at = -1;
      let len = 0;
      for (const n of this.needles) {
        const i = data.indexOf(n, pos);
        if (i !== -1 && (at === -1 || i < at || (i === at && n.length > len))) {
          at = i;
          len = n.length;
        }
      }
      // A match starting before safeEnd ends inside `data` (no value is longer than keep + 1).
      if (at === -1 || at >= safeEnd) break;
      parts.push(data.subarray(pos, at), this.marker);
      pos = at + len;
    }
    const emitTo = Math.max(pos, safeEnd);
    parts.push(data.subarray(pos, emitTo));
    this.carry = final ? Buffer.alloc(0) : Buffer.from(data.subarray(emitTo));
    return Buffer.concat(parts);
  }
}

/** Rewrites one file with its secrets redacted, streaming; a file holding none is rewritten unchanged. */
export async function redactFile(path: string, values: readonly string[]): Promise<void> {
  if (secretValues(values).length === 0) return;
  const tmp = `${path}.berth-redacting`;
  const redactor = new StreamRedactor(values);
  const out = createWriteStream(tmp, { mode: (await lstat(path)).mode & 0o777 });
  try {
    const write = async (buf: Buffer): Promise<void> => {
      if (buf.length > 0 && !out.write(buf)) await once(out, 'drain');
    };
    for await (const chunk of createReadStream(path)) await write(redactor.push(chunk as Buffer));
    await write(redactor.end());
    out.end();
    await once(out, 'finish');
    await rename(tmp, path);
  } catch (err) {
    out.destroy();
    await rm(tmp, { force: true });
    throw err;
  }
}

/** Redacts every regular file under `dir` (recursively), except the names in `skip` at its top level. */
export async function redactTree(dir: string, values: readonly string[], skip: readonly string[] = []): Promise<void> {
  if (secretValues(values).length === 0) return;
  const walk = async (d: string, top: boolean): Promise<void> => {
    for (const e of await readdir(d, { withFileTypes: true })) {
      if (top && skip.includes(e.name)) continue;
      const p = join(d, e.name);
      if (e.isDirectory()) await walk(p, false);
      else if (e.isFile()) await redactFile(p, values);
    }
  };
  await walk(dir, true).catch((err: NodeJS.ErrnoException) => {
    if (err.code !== 'ENOENT') throw err;
  });
}
