#!/usr/bin/env node
// Runs the TypeScript CLI straight from a checkout, so `npx berth …` needs no build step.
import { setFlagsFromString } from 'node:v8';
import { register } from 'tsx/esm/api';

// `berth worker` run by hand gets the worker's young-generation limit too (WORKER_NODE_FLAGS in
// src/server/worker-daemon.ts); set this late it takes partly, so the detached worker gets it on its command line.
if (process.argv[2] === 'worker') setFlagsFromString('--max-semi-space-size=4');
register();
await import('../src/cli/main.ts');
