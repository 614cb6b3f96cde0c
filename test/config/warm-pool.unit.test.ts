// Turning the warm pool off (docs/performance-notes.md, The warm pool): berth.toml's [worker].warm_pool, and
// BERTH_WARM_POOL winning over the file.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { warmPoolEnabled } from '../../src/config/warm-pool.ts';

const saved = { config: process.env.BERTH_CONFIG, pool: process.env.BERTH_WARM_POOL };
afterEach(() => {
  for (const [k, v] of [['BERTH_CONFIG', saved.config], ['BERTH_WARM_POOL', saved.pool]] as const) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
});

function configWith(text: string): string {
  const file = join(mkdtempSync(join(tmpdir(), 'berth-warm-pool-conf-')), 'berth.toml');
  writeFileSync(file, text);
  process.env.BERTH_CONFIG = file;
  return file;
}

describe('warmPoolEnabled', () => {
  it.each<{ toml: string; env?: string; on: boolean; from: RegExp }>([
    { toml: '', on: true, from: /^default$/ },
    { toml: '[worker]\nwarm_pool = false\n', on: false, from: /\[worker\]\.warm_pool$/ },
    { toml: '[worker]\nwarm_pool = true\n', on: true, from: /\[worker\]\.warm_pool$/ },
    { toml: '[worker]\nwarm_pool = true\n', env: '0', on: false, from: /^BERTH_WARM_POOL$/ },
    { toml: '[worker]\nwarm_pool = false\n', env: '1', on: true, from: /^BERTH_WARM_POOL$/ },
  ])('berth.toml $toml with BERTH_WARM_POOL=$env: on $on', ({ toml, env, on, from }) => {
    configWith(toml);
    if (env === undefined) delete process.env.BERTH_WARM_POOL;
    else process.env.BERTH_WARM_POOL = env;
    const got = warmPoolEnabled();
    expect(got.on).toBe(on);
    expect(got.from).toMatch(from);
  });

  it('a value that is not a boolean is refused, naming the file and the key', () => {
    delete process.env.BERTH_WARM_POOL;
    const file = configWith('[worker]\nwarm_pool = "no"\n');
    expect(() => warmPoolEnabled()).toThrow(`${file}: key worker.warm_pool`);
  });

  it('BERTH_WARM_POOL other than 0 or 1 is refused with the fix', () => {
    process.env.BERTH_WARM_POOL = 'off';
    expect(() => warmPoolEnabled()).toThrow(/BERTH_WARM_POOL=off is neither 0 nor 1; set it to 0/);
  });
});
