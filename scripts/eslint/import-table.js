// The import table of docs/design.md section 2 as an ESLint rule: a file under src/<folder>/ (or src/worker.ts) may
// import from another folder of src only if that folder's "may import" column names it. Relative imports are
// resolved against the importing file, so `../../sandbox/x.ts` from src/task/refusals/ counts as task → sandbox.
import { dirname, relative, resolve, sep } from 'node:path';

/** docs/design.md section 2, "may import". `types:` means type-only imports (import type, or every name a type). */
export const IMPORT_TABLE = {
  cli: ['client', 'config', 'server', 'publish', 'serve'],
  publish: ['task', 'verify'],
  serve: ['client', 'config', 'rollouts', 'types:workflows'],
  client: ['types:workflows', 'task', 'tokens', 'config', 'rollouts', 'store'],
  server: ['config'],
  'worker.ts': ['activities', 'host', 'gateway', 'config'],
  workflows: ['outcomes', 'types:activities', 'rollouts'],
  activities: ['host', 'sandbox', 'verify', 'agents', 'task', 'gateway', 'tokens', 'outcomes', 'config', 'types:rollouts', 'store'],
  // What a host owns (slots, removal, warm pool, network per phase, gateway wiring, identity, seed services): no
  // Temporal activity API; it reads the activities' contracts (types.ts) as types only.
  host: ['sandbox', 'verify', 'agents', 'task', 'gateway', 'tokens', 'outcomes', 'config', 'types:activities'],
  gateway: ['tokens', 'outcomes', 'config'],
  /** Token capture for training: records, prefix linking, dialect translation (pure, issue 41). */
  tokens: [],
  agents: ['sandbox', 'task', 'trajectory', 'outcomes'],
  verify: ['sandbox', 'task', 'trajectory', 'outcomes'],
  sandbox: ['task', 'outcomes'],
  task: ['outcomes'],
  trajectory: [],
  outcomes: [],
  // Rollout runs for trainers (issue 41), pure: groups, policies, staleness; the token records' types.
  rollouts: ['tokens'],
  // Episode and job files in an S3-compatible store (issue 39): key layout, manifests, the S3 client.
  store: ['config'],
  config: [],
};

/** The folder of the table a path under src belongs to, or null (outside src, or not in the table). */
function layerOf(srcRoot, file) {
  const rel = relative(srcRoot, file);
  if (rel.startsWith('..') || rel === '') return null;
  const first = rel.split(sep)[0];
  return Object.hasOwn(IMPORT_TABLE, first) ? first : null;
}

function allows(from, to, typeOnly) {
  const row = IMPORT_TABLE[from];
  return row.includes(to) || (typeOnly && row.includes(`types:${to}`));
}

function describeRow(from) {
  const row = IMPORT_TABLE[from];
  if (row.length === 0) return 'nothing of src (a bottom module)';
  return row.map((r) => (r.startsWith('types:') ? `${r.slice(6)} (types only)` : r)).join(', ');
}

const posix = (p) => p.split(sep).join('/');

function typeOnlyImport(node) {
  if (node.type === 'ImportExpression') return false;
  if (node.type === 'TSImportType') return true;
  if (node.importKind === 'type' || node.exportKind === 'type') return true;
  const specifiers = node.specifiers ?? [];
  return specifiers.length > 0 && specifiers.every((s) => s.importKind === 'type' || s.exportKind === 'type');
}

export const importTableRule = {
  meta: {
    type: 'problem',
    docs: { description: 'docs/design.md section 2: each folder of src imports only what its "may import" column names' },
    schema: [
      {
        type: 'object',
        properties: {
          srcRoot: { type: 'string' },
          allow: {
            type: 'array',
            items: {
              type: 'object',
              properties: { from: { type: 'string' }, to: { type: 'string' }, typesOnly: { type: 'boolean' }, why: { type: 'string' } },
              required: ['from', 'to', 'why'],
              additionalProperties: false,
            },
          },
        },
        required: ['srcRoot'],
        additionalProperties: false,
      },
    ],
    messages: {
      wrongDirection:
        '{{from}} may not import {{target}} (src/{{to}}): docs/design.md section 2 lets {{from}} import {{row}}. Move the helper to the layer that may own it.',
    },
  },
  create(context) {
    const { srcRoot, allow = [] } = context.options[0];
    const filename = context.filename ?? context.getFilename();
    const from = layerOf(srcRoot, filename);
    if (!from) return {};
    const root = dirname(srcRoot);
    const fileRel = posix(relative(root, filename));

    function check(node, source) {
      if (!source || typeof source.value !== 'string' || !source.value.startsWith('.')) return;
      const target = resolve(dirname(filename), source.value);
      const to = layerOf(srcRoot, target);
      if (!to || to === from) return;
      const typeOnly = typeOnlyImport(node);
      if (allows(from, to, typeOnly)) return;
      const targetRel = posix(relative(root, target));
      if (allow.some((a) => fileRel.startsWith(a.from) && targetRel.startsWith(a.to) && (!a.typesOnly || typeOnly))) return;
      context.report({ node: source, messageId: 'wrongDirection', data: { from, to, target: targetRel, row: describeRow(from) } });
    }

    return {
      ImportDeclaration: (node) => check(node, node.source),
      ExportNamedDeclaration: (node) => check(node, node.source),
      ExportAllDeclaration: (node) => check(node, node.source),
      ImportExpression: (node) => check(node, node.source),
      TSImportType: (node) => check(node, node.argument?.type === 'TSLiteralType' ? node.argument.literal : node.argument),
    };
  },
};

export default { rules: { 'import-table': importTableRule } };
