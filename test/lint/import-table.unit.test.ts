// docs/design.md section 2: each folder of src imports only what its "may import" column names (the berth/import-table
// rule in eslint.config.js). Sources placed in the folders are linted as text with the project's own config.
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { ESLint } from 'eslint';

const root = join(import.meta.dirname, '..', '..');
const RULE = 'berth/import-table';

const wrong: Array<[folder: string, source: string, names: string]> = [
  ['task', "import { ensureImage } from '../sandbox/images.ts';\nexport const x = ensureImage;\n", 'task may not import src/sandbox/images.ts'],
  ['task/refusals', "import { ensureImage } from '../../sandbox/images.ts';\nexport const x = ensureImage;\n", 'task may not import src/sandbox/images.ts'],
  ['task', "export { ensureImage } from '../sandbox/images.ts';\n", 'task may not import src/sandbox'],
  ['task', "export const x = () => import('../sandbox/images.ts');\n", 'task may not import src/sandbox'],
  ['sandbox', "import { typed } from '../activities/failures.ts';\nexport const x = typed;\n", 'sandbox may not import src/activities'],
  ['outcomes', "import { berthHomeDir } from '../config/index.ts';\nexport const x = berthHomeDir;\n", 'nothing of src (a bottom module)'],
  ['outcomes', "import type { Task } from '../task/index.ts';\nexport type X = Task;\n", 'outcomes may not import src/task'],
  ['trajectory', "import { isMasked } from '../outcomes/index.ts';\nexport const x = isMasked;\n", 'trajectory may not import src/outcomes'],
  ['config', "import { FAILURE_KINDS } from '../outcomes/index.ts';\nexport const x = FAILURE_KINDS;\n", 'config may not import src/outcomes'],
  ['agents', "import { runVerification } from '../verify/index.ts';\nexport const x = runVerification;\n", 'agents may not import src/verify'],
  ['gateway', "import { loadDataset } from '../task/index.ts';\nexport const x = loadDataset;\n", 'gateway may not import src/task'],
  ['workflows', "import { typed } from '../activities/failures.ts';\nexport const x = typed;\n", 'workflows may not import src/activities'],
  ['verify', "import { harnessFor } from '../agents/index.ts';\nexport const x = harnessFor;\n", 'verify may not import src/agents'],
  // The edges issue 12 removed stay removed: the CLI reaches the engine only through the worker layer, the client
  // takes workflow types only (and agent names from config), the server and the activities stay below their callers.
  ['cli', "import { DockerSandboxProvider } from '../sandbox/index.ts';\nexport const x = DockerSandboxProvider;\n", 'cli may not import src/sandbox'],
  ['cli', "import { loadDataset } from '../task/index.ts';\nexport const x = loadDataset;\n", 'cli may not import src/task'],
  ['cli', "import type { ResultRow } from '../workflows/types.ts';\nexport type X = ResultRow;\n", 'cli may not import src/workflows'],
  ['client', "import { episodeWorkflow } from '../workflows/episode.ts';\nexport const x = episodeWorkflow;\n", 'client may not import src/workflows/episode.ts'],
  ['client', "import { INSTALLED_AGENTS } from '../agents/installed/registry.ts';\nexport const x = INSTALLED_AGENTS;\n", 'client may not import src/agents'],
  ['server', "import { withDeps } from '../activities/with-deps.ts';\nexport const x = withDeps;\n", 'server may not import src/activities'],
  ['activities', "import type { ResultRow } from '../workflows/types.ts';\nexport type X = ResultRow;\n", 'activities may not import src/workflows'],
  ['activities', "import { ensureWorker } from '../server/worker-daemon.ts';\nexport const x = ensureWorker;\n", 'activities may not import src/server'],
];

const right: Array<[folder: string, source: string]> = [
  ['sandbox', "import type { Task } from '../task/index.ts';\nimport { isMasked } from '../outcomes/index.ts';\nexport type T = Task;\nexport const x = isMasked;\n"],
  ['workflows', "import type * as acts from '../activities/shared.ts';\nimport { MASKING_KINDS } from '../outcomes/index.ts';\nexport type A = typeof acts;\nexport const x = MASKING_KINDS;\n"],
  ['agents', "import { redact } from '../trajectory/index.ts';\nexport const x = redact;\n"],
  ['activities', "import { homePath } from '../config/index.ts';\nimport { runVerification } from '../verify/index.ts';\nexport const x = [homePath, runVerification];\n"],
  ['outcomes', "import { join } from 'node:path';\nexport const x = join;\n"],
  ['cli', "import { startBatch } from '../client/index.ts';\nimport { AGENT_NAMES } from '../config/agents.ts';\nimport { ensureServer } from '../server/devserver.ts';\nexport const x = [startBatch, AGENT_NAMES, ensureServer];\n"],
  ['client', "import type { ResultRow } from '../workflows/types.ts';\nimport { loadDataset } from '../task/index.ts';\nimport { slotsFile } from '../config/slots.ts';\nexport type X = ResultRow;\nexport const x = [loadDataset, slotsFile];\n"],
  ['server', "import { withLockFile } from '../config/lock-file.ts';\nimport { readSlots } from '../config/slots.ts';\nexport const x = [withLockFile, readSlots];\n"],
];

// Each source is linted as text under a path in its folder: nothing is written into src/, so a lint of the tree that
// runs meanwhile (the gate's ESLint, an editor) never sees these files.
const probes = [...wrong, ...right].map(([folder, source], i) => ({ file: join(root, 'src', folder, `lint-probe-${i}.ts`), source }));
let messages: string[][] = [];

beforeAll(async () => {
  // The project's own config; type information is not needed for this rule, and building it for each new file
  // costs seconds, so the type-aware rules are left to the gate's ESLint run over the tree (scripts/test.sh).
  const eslint = new ESLint({
    cwd: root,
    overrideConfig: {
      languageOptions: { parserOptions: { projectService: false } },
      rules: { '@typescript-eslint/no-floating-promises': 'off' },
    },
  });
  messages = [];
  for (const p of probes) {
    const [result] = await eslint.lintText(p.source, { filePath: p.file });
    messages.push((result?.messages ?? []).map((m) => `${m.ruleId}: ${m.message}`));
  }
}, 60_000);

describe('the import table of docs/design.md section 2', () => {
  it.each(wrong.map((w, i) => [w[0], w[2], i] as const))('src/%s: a wrong-direction import fails naming the rule (%s)', (_folder, names, i) => {
    const found = messages[i]!.filter((m) => m.startsWith(`${RULE}:`));
    expect(found).toHaveLength(1);
    expect(found[0]).toContain(names);
    expect(found[0]).toContain('docs/design.md section 2');
  });

  it.each(right.map((r, i) => [r[0], wrong.length + i] as const))('src/%s: a right-direction import passes', (_folder, i) => {
    expect(messages[i]).toEqual([]);
  });
});
