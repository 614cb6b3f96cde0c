import tseslint from 'typescript-eslint';
import { builtinModules } from 'node:module';

// Workflow code runs in Temporal's deterministic sandbox: no Node built-ins, no I/O libraries.
export const workflowForbiddenModules = [
  ...builtinModules,
  ...builtinModules.map((m) => `node:${m}`),
  'dockerode',
  'tar-stream',
  'smol-toml',
  '@temporalio/activity',
  '@temporalio/client',
  '@temporalio/worker',
];

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
    files: ['src/workflows/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: workflowForbiddenModules.map((name) => ({
            name,
            message: 'Workflow code must be deterministic: do I/O in an activity.',
          })),
          patterns: [
            { group: ['**/task/**', '**/sandbox/**', '**/activities/**', '**/verify/**', '**/agents/**'], allowTypeImports: true,
              message: 'Workflows import activities and I/O layers as types only.' },
          ],
        },
      ],
      'no-restricted-globals': ['error', 'process', 'require', 'setTimeout', 'setInterval', 'fetch'],
    },
  },
);
