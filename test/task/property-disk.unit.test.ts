// Property on disk: random dataset trees (nesting, hidden folders, symlinks, duplicate ids, dataset.toml)
// load into tasks and refusals; only a DatasetRefusal is ever thrown.
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DatasetRefusal, loadDatasetSync } from '../../src/task/index.ts';
import { SIMPLE_FILES, silent } from './helpers.ts';

const RUNS = process.env.CI ? 400 : 60;

const segment = fc.constantFrom('a', 'b', 'same', '.hidden', 'deep', 'x');
const folder = fc.record({
  path: fc.array(segment, { minLength: 1, maxLength: 8 }),
  drop: fc.subarray(Object.keys(SIMPLE_FILES)),
  toml: fc.constantFrom('', '[agent]\ntimeout_sec = 1\n', 'x = [', '[[steps]]\nname = "s"\n', '[verifier]\nenvironment_mode = "separate"\n'),
  link: fc.constantFrom('none', 'folder', 'file-out', 'dir-in'),
});
const datasetToml = fc.constantFrom(undefined, '[gym]\nlicense = "MIT"\n', '[gym.tasks."same"]\nartifacts = ["/app/x"]\n', '[gym]\ntype = "example"\n', '[gym.tasks."nope".environment]\ncpus = 1\n', '[dataset]\nname = "a/b"\n[[tasks]]\nname = "a/c"\n');

describe('property: loading random dataset trees from disk', () => {
  it(`returns tasks and refusals, throwing only DatasetRefusal (${RUNS} trees)`, () => {
    fc.assert(
      fc.property(fc.array(folder, { maxLength: 5 }), datasetToml, (folders, dsToml) => {
        const root = mkdtempSync(join(tmpdir(), 'berth-prop-'));
        try {
          const outside = join(root, '..', `${root.split('/').pop()}-outside.txt`);
          const ds = join(root, 'ds');
          mkdirSync(ds);
          if (dsToml !== undefined) writeFileSync(join(ds, 'dataset.toml'), dsToml);
          folders.forEach((f, i) => {
            const dir = join(ds, ...f.path);
            for (const [rel, content] of Object.entries(SIMPLE_FILES)) {
              if (f.drop.includes(rel) && rel !== 'task.toml') continue;
              const abs = join(dir, rel);
              mkdirSync(dirname(abs), { recursive: true });
              writeFileSync(abs, rel === 'task.toml' ? f.toml : content);
            }
            try {
              if (f.link === 'folder') symlinkSync(dir, join(ds, `link-${i}`));
              if (f.link === 'file-out') {
                writeFileSync(outside, 'x');
                symlinkSync(outside, join(dir, 'tests', `out-${i}`));
              }
              if (f.link === 'dir-in') symlinkSync(join(dir, 'tests'), join(dir, 'environment', `in-${i}`));
            } catch {
              // The folder may be nested under an earlier one's link target; a failed link is fine.
            }
          });
          try {
            const d = loadDatasetSync(ds, { logger: silent });
            const ids = d.tasks.map((t) => t.id);
            expect(new Set(ids).size).toBe(ids.length);
            for (const r of d.refused) expect(r.message).toContain('Fix:');
          } catch (e) {
            expect(e).toBeInstanceOf(DatasetRefusal);
          }
          rmSync(outside, { force: true });
        } finally {
          rmSync(root, { recursive: true, force: true });
        }
      }),
      { numRuns: RUNS },
    );
  });
});
