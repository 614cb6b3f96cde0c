import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { hostProvider } from '../../src/activities/deps.ts';

// [sandbox] provider picks the worker's sandbox (issue 23, "Selecting it"). Until a provider is built on the
// Kubernetes driver, a worker told to use it refuses, naming the file, the key and the fix, rather than run on Docker.

const saved = process.env.BERTH_CONFIG;
afterEach(() => {
  if (saved === undefined) delete process.env.BERTH_CONFIG; else process.env.BERTH_CONFIG = saved;
});

function configWith(text: string): string {
  const file = join(mkdtempSync(join(tmpdir(), 'berth-config-')), 'berth.toml');
  writeFileSync(file, text);
  process.env.BERTH_CONFIG = file;
  return file;
}

describe('the worker\'s sandbox from berth.toml', () => {
  it('refuses provider = "kubernetes" for now, naming the key and the fix', () => {
    const file = configWith('[sandbox]\nprovider = "kubernetes"\n[kubernetes]\nregistry = "127.0.0.1:5050"\n');
    expect(() => hostProvider()).toThrow(`${file}: key sandbox.provider: the kubernetes sandbox cannot run episodes yet`);
    expect(() => hostProvider()).toThrow(/Set \[sandbox\] provider = "docker"/);
  });

  it('builds the Docker provider for provider = "docker" (no engine call)', () => {
    configWith('[sandbox]\nprovider = "docker"\n');
    expect(hostProvider().driver.sandbox).toBe('docker');
  });
});
