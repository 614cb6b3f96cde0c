import { mkdtempSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { slotCapacity } from '../../src/config/slots.ts';

// docs/design.md section 7 (Config file: [worker] slots; Workers and hosts: default cores × 4); docs/configuration.md.
describe('a host\'s sandbox slots', () => {
  const cwd = process.cwd();
  const env = process.env.BERTH_WORKER_SLOTS;
  afterEach(() => {
    process.chdir(cwd);
    if (env === undefined) delete process.env.BERTH_WORKER_SLOTS;
    else process.env.BERTH_WORKER_SLOTS = env;
  });
  const inFolder = (toml: string | null) => {
    const dir = mkdtempSync(join(tmpdir(), 'berth-slots-cfg-'));
    if (toml !== null) writeFileSync(join(dir, 'berth.toml'), toml);
    process.chdir(dir);
    return dir;
  };

  it.each([
    { case: 'default: cores × 4', toml: null, envValue: undefined, slots: cpus().length * 4, from: /default/ },
    { case: 'berth.toml [worker].slots', toml: '[worker]\nslots = 24\n', envValue: undefined, slots: 24, from: /berth\.toml \[worker\]\.slots/ },
    { case: 'BERTH_WORKER_SLOTS wins over berth.toml', toml: '[worker]\nslots = 24\n', envValue: '40', slots: 40, from: /BERTH_WORKER_SLOTS/ },
  ])('$case', ({ toml, envValue, slots, from }) => {
    inFolder(toml);
    if (envValue === undefined) delete process.env.BERTH_WORKER_SLOTS;
    else process.env.BERTH_WORKER_SLOTS = envValue;
    const got = slotCapacity();
    expect(got.slots).toBe(slots);
    expect(got.from).toMatch(from);
  });

  it.each([
    { case: 'a bad BERTH_WORKER_SLOTS names the variable and the fix', toml: null, envValue: 'many', error: /BERTH_WORKER_SLOTS=many is not a whole number of at least 1/ },
    { case: 'a bad [worker].slots names the file and the key', toml: '[worker]\nslots = 0\n', envValue: undefined, error: /berth\.toml: key worker\.slots/ },
  ])('$case', ({ toml, envValue, error }) => {
    inFolder(toml);
    if (envValue === undefined) delete process.env.BERTH_WORKER_SLOTS;
    else process.env.BERTH_WORKER_SLOTS = envValue;
    expect(() => slotCapacity()).toThrow(error);
  });
});
