import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser } from 'playwright-core';

export const repoRoot = join(import.meta.dirname, '..', '..');

/** test-artifacts/ at the repository root (gitignored): screenshots for a human to look at. */
export function artifactPath(name: string): string {
  const dir = join(repoRoot, 'test-artifacts');
  mkdirSync(dir, { recursive: true });
  return join(dir, name);
}

/** Debian's chromium, headless (the machine has no Playwright-downloaded browsers). */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: process.env.BERTH_CHROMIUM ?? '/usr/bin/chromium', args: ['--no-sandbox'], headless: true });
}
