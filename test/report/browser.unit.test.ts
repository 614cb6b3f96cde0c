import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { writeReport } from '../../src/client/report-folder.ts';
import { ResultsFolder } from '../../src/client/results.ts';
import { artifactPath, launchChromium } from '../ui/browser.ts';
import { SCRIPT_REASON, syntheticBatch } from './fixtures.ts';

describe('the report in a real browser, with the network cut off', () => {
  let browser: Browser;
  let page: Page;
  const requests: string[] = [];
  const blocked: string[] = [];
  const consoleErrors: string[] = [];

  beforeAll(async () => {
    const dir = mkdtempSync(join(tmpdir(), 'berth-report-browser-'));
    const { rows, failed } = syntheticBatch();
    const folder = new ResultsFolder(dir);
    folder.finish(rows, failed);
    folder.writeSkipped([{ task_id: 'delta', path: '/data/delta', reason: 'environment/docker-compose.yaml: compose tasks are refused', stage: 'load' }]);
    const file = writeReport({ batchId: 'synthetic-20261130-000000-abcd', resultsDir: dir, agent: 'oracle' });

    browser = await launchChromium();
    const context = await browser.newContext({ viewport: { width: 1200, height: 900 } });
    // Anything that is not the file itself is recorded and refused.
    await context.route('**/*', async (route) => {
      const url = route.request().url();
      if (url.startsWith('file://')) return route.continue();
      blocked.push(url);
      return route.abort('blockedbyclient');
    });
    page = await context.newPage();
    page.on('request', (r) => { requests.push(r.url()); });
    page.on('console', (m) => { if (m.type() === 'error') consoleErrors.push(m.text()); });
    page.on('pageerror', (e) => { consoleErrors.push(e.message); });
    await page.goto(pathToFileURL(file).href, { waitUntil: 'load' });
  });

  afterAll(async () => {
    if (page) await page.screenshot({ path: artifactPath('report.png'), fullPage: true });
    await browser?.close();
  });

  it('makes no request outside the file:// origin', () => {
    expect(requests.length).toBeGreaterThan(0);
    expect(requests.filter((u) => !u.startsWith('file://'))).toEqual([]);
    expect(blocked).toEqual([]);
    expect(consoleErrors).toEqual([]);
  });

  it('shows the header with the counts and the mean reward', async () => {
    await expect.poll(() => page.title()).toBe('Berth report · synthetic-20261130-000000-abcd');
    const header = await page.locator('header').innerText();
    expect(header).toContain('dataset synthetic · agent oracle');
    for (const [id, value] of [['episodes', '9'], ['scored', '7'], ['masked', '1'], ['failed', '1'], ['skipped', '1'], ['mean', '0.643']]) {
      expect(await page.locator(`#card-${id} .v`).innerText()).toBe(value);
    }
  });

  it('shows the pass@k table per task and overall', async () => {
    const table = page.locator('table', { hasText: 'pass@1' });
    await expect.poll(() => table.isVisible()).toBe(true);
    const cells = async (name: string) => (await table.getByRole('row').filter({ hasText: name }).getByRole('cell').allInnerTexts()).map((s) => s.trim());
    expect(await table.getByRole('columnheader').allInnerTexts()).toEqual(
      ['task', 'repeat 1', 'repeat 2', 'repeat 3', 'n', 'c', 'pass@1', 'pass@2', 'pass@3']);
    expect(await cells('alpha')).toEqual(['alpha', '1', '1', '0', '3', '2', '0.667', '1', '1']);
    expect(await cells('beta')).toEqual(['beta', '0', 'masked', '1', '2', '1', '0.5', '1', '-']);
    expect(await cells('gamma')).toEqual(['gamma', '0.5', '1', '—', '2', '1', '0.5', '1', '-']);
    expect(await cells('all tasks')).toEqual(['all tasks', '', '', '', '', '', '0.556', '1', '1 (1 of 3 tasks)']);
  });

  it('shows the failure kinds, the <script> in a reason as plain text, and never runs it', async () => {
    const failures = page.locator('section#failures');
    const missing = failures.getByRole('row').filter({ hasText: 'harbor:missing_reward' });
    expect(await missing.innerText()).toContain('scored (0)');
    expect(await missing.innerText()).toContain(SCRIPT_REASON);
    expect(await failures.getByRole('row').filter({ hasText: 'provider_unavailable' }).innerText()).toContain('masked');
    expect(await failures.innerText()).toContain('1 episode workflow failed or was cancelled');
    expect(await page.evaluate(() => (globalThis as { __pwned?: unknown }).__pwned)).toBeUndefined();
    expect(await page.locator('script').count()).toBe(0);
  });

  it('draws the histogram and the timings, and lists the skipped task', async () => {
    const histogram = page.getByRole('img', { name: 'Reward distribution (unmasked rows)' });
    const box = await histogram.boundingBox();
    expect(box?.width).toBeGreaterThan(100);
    expect(await histogram.locator('rect').count()).toBe(10);
    const timings = await page.locator('section#timings table').innerText();
    expect(timings).toMatch(/agent\s+7\s+2\.857\s+3\s+6/);
    expect(await page.locator('section#skipped').innerText()).toContain('compose tasks are refused');
  });
});
