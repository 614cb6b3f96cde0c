#!/usr/bin/env node
// Runs the TypeScript CLI straight from a checkout, so `npx berth …` needs no build step.
import { register } from 'tsx/esm/api';

register();
await import('../src/cli/main.ts');
