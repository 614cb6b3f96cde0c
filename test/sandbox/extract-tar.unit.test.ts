// extractTar unpacks archives whose bytes a sandbox controls (the engine's copy, or the snapshot test.sh's exec
// sends back), so nothing in one may write outside the target folder on the host.
import { existsSync, lstatSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import * as tar from 'tar-stream';
import { extractTar } from '../../src/sandbox/files.ts';

type Entry = { name: string; type?: 'file' | 'directory' | 'symlink'; linkname?: string; body?: string };

async function archive(entries: Entry[]): Promise<Readable> {
  const pack = tar.pack();
  for (const e of entries) pack.entry({ name: e.name, type: e.type ?? 'file', mode: e.type === 'directory' ? 0o755 : 0o644, ...(e.linkname ? { linkname: e.linkname } : {}) }, e.body ?? '');
  pack.finalize();
  const chunks: Buffer[] = [];
  for await (const c of pack as unknown as AsyncIterable<Buffer>) chunks.push(c);
  return Readable.from([Buffer.concat(chunks)]);
}

const root = mkdtempSync(join(tmpdir(), 'berth-extract-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('extractTar refuses to write outside its folder', () => {
  const cases: { name: string; entries: (outside: string) => Entry[]; rejects: RegExp | null }[] = [
    {
      name: 'a file beneath a link the archive made',
      entries: (outside) => [{ name: 'verifier', type: 'directory' }, { name: 'verifier/x', type: 'symlink', linkname: outside }, { name: 'verifier/x/evil', body: 'pwned' }],
      rejects: /beneath a link/,
    },
    {
      name: 'a file at the path of a link the archive made (the link is replaced, not followed)',
      entries: (outside) => [{ name: 'verifier', type: 'directory' }, { name: 'verifier/f', type: 'symlink', linkname: join(outside, 'victim') }, { name: 'verifier/f', body: 'new' }],
      rejects: null,
    },
    {
      name: 'an entry climbing out with ..',
      entries: () => [{ name: 'verifier', type: 'directory' }, { name: 'verifier/../../evil', body: 'pwned' }],
      rejects: /outside/,
    },
  ];
  for (const c of cases) {
    it(c.name, async () => {
      const outside = mkdtempSync(join(root, 'outside-'));
      writeFileSync(join(outside, 'victim'), 'untouched');
      const target = join(root, `target-${Math.random().toString(36).slice(2)}`);
      const run = extractTar(await archive(c.entries(outside)), target);
      if (c.rejects) await expect(run).rejects.toThrow(c.rejects);
      else await run;
      expect(readFileSync(join(outside, 'victim'), 'utf8')).toBe('untouched');
      expect(existsSync(join(outside, 'evil'))).toBe(false);
      expect(existsSync(join(root, 'evil'))).toBe(false);
      if (!c.rejects) {
        expect(lstatSync(join(target, 'f')).isSymbolicLink()).toBe(false);
        expect(readFileSync(join(target, 'f'), 'utf8')).toBe('new');
      }
    });
  }
});
