#!/usr/bin/env node
// `berth`. In a checkout it runs the TypeScript of src/ through tsx, so an edit counts at once and no build step
// stands between a change and `npx berth …` (a dist/ left by `npm run build` is not used: it could be stale). An
// installed package ships no src/, only dist/ (`npm run build`), which runs as plain JavaScript.
import { existsSync } from 'node:fs';
import { setFlagsFromString } from 'node:v8';

// `berth worker` run by hand gets the worker's young-generation limit too (WORKER_NODE_FLAGS in
// src/server/worker-daemon.ts); set this late it takes partly, so the detached worker gets it on its command line.
if (process.argv[2] === 'worker') setFlagsFromString('--max-semi-space-size=4');
const source = new URL('../src/cli/main.ts', import.meta.url);
if (existsSync(source)) {
  const { register } = await import('tsx/esm/api');
  register();
  await import(source.href);
} else {
  await import('../dist/cli/main.js');
}
