import tseslint from 'typescript-eslint';
import { builtinModules } from 'node:module';
import { join } from 'node:path';
import importTable from './scripts/eslint/import-table.js';

// Workflow code runs in Temporal's deterministic sandbox: no Node built-ins, no I/O libraries. Which folders of src
// it may import is the import table's rule (berth/import-table below), like every other folder's.
export const workflowForbiddenModules = [
  ...builtinModules,
  ...builtinModules.map((m) => `node:${m}`),
  'dockerode',
  '@kubernetes/client-node',
  'tar-stream',
  'smol-toml',
  '@temporalio/activity',
  '@temporalio/client',
  '@temporalio/worker',
];

// Imports today's code makes against docs/design.md section 2's table, each with the reason it is left. Every entry is
// a debt to pay by moving the helper to the layer that may own it, never a rule to widen: a new import against the
// table fails the lint (test/lint/import-table.unit.test.ts).
export const importTableAllowlist = [
  // agents name the gateway's types for the scope a harness gets (installed agents call the model through it).
  { from: 'src/agents/', to: 'src/gateway/index.ts', typesOnly: true, why: 'the gateway scope types a harness is handed' },
  // The CLI may import the client, config and server; none of them may reach the engine.
  { from: 'src/cli/', to: 'src/worker.ts', why: 'commands that act on this host\'s engine (`berth worker`, `janitor`, `gc`, `agents`, the host line of `server status`) go through the worker layer' },
  // No module both the client and workflow code may import holds values (docs/design.md section 2: the client imports config
  // and task, workflows only outcomes): the shared rules are defined once, each on one side, and imported across.
  { from: 'src/client/', to: 'src/workflows/public.ts', why: 'episode ids, start options, batch expansion and its upcoming episodes, the batch\'s update names and concurrency rule, the usage sum: the workflows\' rules the client applies too' },
  { from: 'src/workflows/', to: 'src/config/search-attributes.ts', why: 'the search attribute keys the workflows set, defined once with the list the server registers and the client queries' },
  { from: 'src/workflows/', to: 'src/config/batch-ids.ts', why: 'the name of the batch query the hosts\' warm pools ask (src/host/warm-pool.ts), defined once for both sides' },
  { from: 'src/client/retry.ts', to: 'src/outcomes/index.ts', why: '`retry --masked` reads each kind\'s retryable flag (outcomes is a bottom module the table leaves out of the client row)' },
  { from: 'src/client/', to: 'src/trajectory/atif-types.ts', typesOnly: true, why: 'the viewer reads ATIF trajectories' },
];

/** The engines' client libraries, each of which only its driver folder (src/sandbox/<engine>/) may import. */
function engineClients(message, names = ['dockerode', '@kubernetes/client-node']) {
  return names.map((name) => ({ name, message }));
}

/** Imports of a driver folder (src/sandbox/docker/, src/sandbox/kubernetes/): only that folder and src/sandbox/index.ts make them. */
function driverFolders(message, names = ['docker', 'kubernetes']) {
  return names.map((name) => ({ regex: `^(\\.{1,2}/)+(sandbox/)?${name}/`, message }));
}

export default tseslint.config(
  { ignores: ['node_modules/**', 'results/**', 'test-artifacts/**', 'src/verify/shim/**'] },
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-explicit-any': 'off',
    },
  },
  {
    files: ['src/**/*.ts'],
    plugins: { berth: importTable },
    rules: {
      'berth/import-table': ['error', { srcRoot: join(import.meta.dirname, 'src'), allow: importTableAllowlist }],
    },
  },
  {
    // docs/design.md section 2: the engine is the sandbox layer's alone; everything above it goes through the provider.
    files: ['src/**/*.ts'],
    ignores: ['src/sandbox/**'],
    rules: {
      'no-restricted-imports': ['error', {
        paths: engineClients('Only src/sandbox/ talks to an engine: use a SandboxProvider method.'),
        patterns: driverFolders('A driver folder is the sandbox layer\'s own: import what src/sandbox/index.ts exports.'),
      }],
    },
  },
  {
    // Issue 13 / docs/design.md section 6: inside the sandbox too, only a driver folder talks to its engine (dockerode in
    // src/sandbox/docker/, client-node in src/sandbox/kubernetes/); the behaviour on exec (detached processes, seed
    // phases, markers, files) works through SandboxDriver.
    files: ['src/sandbox/**/*.ts'],
    ignores: ['src/sandbox/docker/**', 'src/sandbox/kubernetes/**', 'src/sandbox/index.ts'],
    rules: {
      'no-restricted-imports': ['error', {
        paths: engineClients('Only a driver folder talks to its engine: use a SandboxDriver primitive (src/sandbox/driver.ts).'),
        patterns: driverFolders('Neutral sandbox files do not import a driver folder: move what both need to a neutral file (only src/sandbox/index.ts names the drivers).'),
      }],
    },
  },
  {
    files: ['src/sandbox/docker/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', {
        paths: engineClients('The Docker driver does not talk to Kubernetes.', ['@kubernetes/client-node']),
        patterns: driverFolders('The engines stand side by side: the Docker driver imports nothing of the Kubernetes one.', ['kubernetes']),
      }],
    },
  },
  {
    files: ['src/sandbox/kubernetes/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', {
        paths: engineClients('The Kubernetes driver does not talk to Docker.', ['dockerode']),
        patterns: driverFolders('The engines stand side by side: the Kubernetes driver imports nothing of the Docker one (neutral Compose reading is src/sandbox/compose/).', ['docker']),
      }],
    },
  },
  {
    // src/host/ is what a host owns, outside Temporal's activity API: src/activities/ wraps it for Temporal.
    files: ['src/host/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', {
        paths: [
          ...engineClients('Only src/sandbox/ talks to an engine: use a SandboxProvider method.'),
          ...['@temporalio/activity', '@temporalio/workflow'].map((name) => ({ name, message: 'src/host/ does not speak Temporal\'s activity API: throw a typed error (src/host/errors.ts) and let src/activities/failures.ts turn it into a failure.' })),
        ],
        patterns: driverFolders('A driver folder is the sandbox layer\'s own: import what src/sandbox/index.ts exports.'),
      }],
    },
  },
  {
    files: ['src/workflows/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: workflowForbiddenModules.map((name) => ({
            name,
            message: 'Workflow code must be deterministic: do I/O in an activity.',
          })),
        },
      ],
      'no-restricted-globals': ['error', 'process', 'require', 'setTimeout', 'setInterval', 'fetch'],
    },
  },
);
