import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { redact, redactFile, StreamRedactor } from '../../src/trajectory/redact.ts';

const dir = mkdtempSync(join(tmpdir(), 'berth-redact-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('redact', () => {
  it('replaces every value, longest first, from a record or a list', () => {
    expect(redact('a secret and secret-long here', { A: 'secret', B: 'secret-long' })).toBe('a [REDACTED] and [REDACTED] here');
    expect(redact('x=abc y=abc', ['abc', ''])).toBe('x=[REDACTED] y=[REDACTED]');
    expect(redact('nothing', {})).toBe('nothing');
  });

  it('StreamRedactor finds values cut by any chunk boundary', () => {
    const text = 'head TOKEN-12345 mid TOKEN-12345TOKEN-12345 tail TOKEN-1234';
    for (let size = 1; size <= text.length; size++) {
      const r = new StreamRedactor(['TOKEN-12345']);
      const parts: Buffer[] = [];
      for (let i = 0; i < text.length; i += size) parts.push(r.push(Buffer.from(text.slice(i, i + size))));
      parts.push(r.end());
      expect(Buffer.concat(parts).toString(), `chunk size ${size}`).toBe(redact(text, ['TOKEN-12345']));
    }
  });

  it('redactFile rewrites a file in place and keeps its mode', () => {
    const f = join(dir, 'log.txt');
    writeFileSync(f, 'key=hunter22\n'.repeat(10_000), { mode: 0o640 });
    return redactFile(f, ['hunter22']).then(() => {
      expect(readFileSync(f, 'utf8')).toBe('key=[REDACTED]\n'.repeat(10_000));
    });
  });
});
