// berth.toml read once per version of the file (DESIGN.md section 2: src/config, read once).
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadBerthConfig } from '../../src/config/index.ts';

describe('loadBerthConfig', () => {
  it('returns the same values while the file is unchanged, and the new ones once it changes', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'berth-config-')), 'berth.toml');
    writeFileSync(file, '[worker]\nslots = 3\n');
    const first = loadBerthConfig(file);
    expect(first.config.worker.slots).toBe(3);
    // A caller that changes what it was handed does not change what the next caller gets.
    (first.config.worker as { slots?: number }).slots = 99;
    expect(loadBerthConfig(file).config.worker.slots).toBe(3);
    writeFileSync(file, '[worker]\nslots = 12\n');
    expect(loadBerthConfig(file).config.worker.slots).toBe(12);
  });

  it('still refuses a file that turned invalid, naming it', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'berth-config-')), 'berth.toml');
    writeFileSync(file, '[worker]\nslots = 2\n');
    loadBerthConfig(file);
    writeFileSync(file, '[worker]\nslots = "many"\n');
    expect(() => loadBerthConfig(file)).toThrow(`${file}: key worker.slots`);
  });
});
