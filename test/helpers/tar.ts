// Tar archives in memory for tests: made from a map of paths to contents, and read back into one.
import { Readable } from 'node:stream';
import { extract, pack } from 'tar-stream';

export function tarOf(files: Record<string, string>): Promise<Buffer> {
  const p = pack();
  for (const [name, body] of Object.entries(files)) p.entry({ name, mode: 0o644 }, body);
  p.finalize();
  const chunks: Buffer[] = [];
  return new Promise((resolve, reject) => {
    p.on('data', (c: unknown) => chunks.push(c as Buffer)).on('end', () => resolve(Buffer.concat(chunks))).on('error', reject);
  });
}

/** Every entry's name (folders end in /) and, for files, its content. */
export function entriesOf(archive: Buffer | NodeJS.ReadableStream): Promise<Record<string, string | null>> {
  const x = extract();
  const entries: Record<string, string | null> = {};
  return new Promise((resolve, reject) => {
    x.on('entry', (header, stream, next) => {
      const chunks: Buffer[] = [];
      stream.on('data', (c: unknown) => chunks.push(c as Buffer)).on('end', () => {
        entries[header.name] = header.type === 'file' ? Buffer.concat(chunks).toString('utf8') : null;
        next();
      });
    });
    x.on('finish', () => resolve(entries)).on('error', reject);
    (Buffer.isBuffer(archive) ? Readable.from([archive]) : (archive as Readable)).pipe(x);
  });
}
