import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { writeReport } from '../../src/client/report-folder.ts';
import { serveReport, type ReportServer } from '../../src/client/report-server.ts';
import { ResultsFolder } from '../../src/client/results.ts';
import { artifactPath, launchChromium } from '../ui/browser.ts';
import { episodeLogs, TOOL_SCRIPT } from './episode-fixture.ts';
import { row, syntheticBatch } from './fixtures.ts';

const BATCH = 'viewer-20261201-000000-abcd';
const STDOUT = '============================= test session starts ==============================\ntest_outputs.py::test_file_exists PASSED\ntest_outputs.py::test_content PASSED\n============================== 2 passed in 0.03s ===============================\n';

/** The synthetic batch, with alpha #1 pointing at a logs folder that holds a real-shaped trajectory and verifier output. */
function resultsWithLogs(): string {
  const dir = mkdtempSync(join(tmpdir(), 'berth-viewer-'));
  const { rows, failed } = syntheticBatch();
  rows[0] = row({
    task_id: 'alpha', repeat: 1, reward: 1, verifier_rewards: { reward: 1 }, timings: { seed: 1.2, agent: 2.5, verify: 0.8 },
    turns: [{ step: 'alpha', reward: 1, verifier_rewards: { reward: 1 }, failure_kind: null }],
    workflow_id: `berth/${BATCH}/alpha/1`, run_id: 'run-alpha-1', logs_dir: episodeLogs({ stdout: STDOUT, reward: '1\n' }),
    usage: { promptTokens: 670, completionTokens: 29, calls: 3 },
  });
  const folder = new ResultsFolder(dir);
  folder.finish(rows, failed);
  folder.writeSkipped([]);
  return dir;
}

/** A context where anything but the allowed origin is recorded and refused. */
async function offlineContext(browser: Browser, allowed: (url: string) => boolean, blocked: string[]): Promise<BrowserContext> {
  const context = await browser.newContext({ viewport: { width: 1200, height: 900 } });
  await context.route('**/*', async (route) => {
    const url = route.request().url();
    if (allowed(url)) return route.continue();
    blocked.push(url);
    return route.abort('blockedbyclient');
  });
  return context;
}

describe('the viewer: a page per episode, in real chromium with the network refused', () => {
  let browser: Browser;
  let page: Page;
  let file: string;
  const blocked: string[] = [];
  const errors: string[] = [];

  beforeAll(async () => {
    const dir = resultsWithLogs();
    file = writeReport({ batchId: BATCH, resultsDir: dir, agent: 'openai' });
    browser = await launchChromium();
    page = await (await offlineContext(browser, (u) => u.startsWith('file://'), blocked)).newPage();
    page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
    page.on('pageerror', (e) => { errors.push(e.message); });
    await page.goto(pathToFileURL(file).href, { waitUntil: 'load' });
  });
  afterAll(async () => { await browser?.close(); });

  it('writes one page per reported row beside the batch page', () => {
    expect(readdirSync(join(file, '..', 'episodes')).filter((f) => f.endsWith('.html'))).toHaveLength(8);
  });

  it('the batch page lists every row with a link, and filters by outcome and failure kind', async () => {
    const rows = page.locator('#episode-list tbody tr');
    const visible = async () => (await rows.evaluateAll((trs) => trs.filter((tr) => (tr as unknown as { offsetParent: unknown }).offsetParent !== null).length));
    expect(await rows.count()).toBe(8);
    expect(await visible()).toBe(8);
    expect(await page.locator('#episode-list a', { hasText: 'view' }).count()).toBe(8);
    await page.locator('label[for="fo-masked"]').click();
    expect(await visible()).toBe(1);
    expect(await rows.filter({ visible: true }).innerText()).toContain('provider_unavailable');
    await page.locator('label[for="fo-all"]').click();
    await page.locator('#filter-kind label', { hasText: 'harbor:missing_reward' }).click();
    expect(await visible()).toBe(1);
    expect(await rows.filter({ visible: true }).innerText()).toMatch(/beta\s+1/);
    await page.locator('label[for="fk-none"]').click();
    await page.locator('label[for="fo-solved"]').click();
    expect(await visible()).toBe(4);
    await page.screenshot({ path: artifactPath('viewer-batch-filtered.png'), fullPage: true });
    await page.locator('label[for="fo-all"]').click();
    await page.locator('label[for="fk-any"]').click();
    await page.screenshot({ path: artifactPath('viewer-batch.png'), fullPage: true });
  });

  it('an episode page shows the trajectory step by step, the verifier output, the reward files, timings, usage and cost', async () => {
    await page.locator('#episode-list tbody tr', { hasText: 'alpha' }).first().getByRole('link', { name: 'view' }).click();
    await page.waitForLoadState('load');
    expect(await page.locator('h1').innerText()).toBe('alpha · repeat 1 · attempt 1');
    const steps = page.locator('.step');
    expect(await steps.count()).toBe(5);
    expect(await steps.nth(1).innerText()).toContain('Write ok to out.txt');
    const call = steps.nth(2);
    expect(await call.innerText()).toContain('echo ok > /app/out.txt && cat /app/out.txt');
    // Tool output is text: the <script> and <img> show as characters and never run or load.
    expect(await call.innerText()).toContain(TOOL_SCRIPT);
    expect(await page.evaluate(() => (globalThis as { __pwned?: unknown }).__pwned)).toBeUndefined();
    expect(await page.locator('script, img').count()).toBe(0);
    // The 60-line listing is folded: its preview shows, the rest opens on demand.
    const fold = steps.nth(3).locator('.fold');
    expect(await fold.locator('pre[data-preview]').innerText()).toContain('line 14:');
    expect(await fold.locator('details pre').isVisible()).toBe(false);
    await fold.locator('summary').click();
    expect(await fold.locator('details pre').innerText()).toContain('line 60:');
    expect(await page.locator('.verifier-output').innerText()).toContain('2 passed in 0.03s');
    expect(await page.locator('.reward-files').innerText()).toMatch(/reward\.txt\s+1/i);
    expect(await page.locator('#phase-timings').innerText()).toMatch(/agent\s+2\.5/);
    expect(await page.locator('#usage').innerText()).toMatch(/promptTokens\s+670/);
    expect(await page.locator('#usage').innerText()).toMatch(/total_cost_usd\s+0\.00092/);
    const ui = await page.getByRole('link', { name: 'open in the Temporal UI' }).getAttribute('href');
    expect(ui).toBe(`http://localhost:8233/namespaces/default/workflows/${encodeURIComponent(`berth/${BATCH}/alpha/1`)}/run-alpha-1/history`);
    await page.screenshot({ path: artifactPath('viewer-episode.png'), fullPage: true });
  });

  it('a masked episode page shows its failure kind and reason; no page made any request off the file set', async () => {
    await page.goBack();
    await page.locator('#episode-list tbody tr', { hasText: 'provider_unavailable' }).getByRole('link', { name: 'view' }).click();
    const failure = await page.locator('.failure').innerText();
    expect(failure).toContain('provider_unavailable');
    expect(failure).toContain('masked: not in the score');
    expect(failure).toContain('sandbox lost: container berth-x is gone');
    expect(await page.locator('#logs').innerText()).toContain('names no logs folder');
    await page.screenshot({ path: artifactPath('viewer-episode-masked.png'), fullPage: true });
    expect(blocked).toEqual([]);
    expect(errors).toEqual([]);
  });
});

describe('berth view: the same pages served on localhost', () => {
  let served: ReportServer;
  let browser: Browser;
  afterAll(async () => { await browser?.close(); await served?.close(); });

  it('serves the batch page and the episode pages, and only them', async () => {
    served = await serveReport({ batchId: BATCH, resultsDir: resultsWithLogs(), agent: 'openai' });
    expect(served.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
    browser = await launchChromium();
    const blocked: string[] = [];
    const page = await (await offlineContext(browser, (u) => u.startsWith(served.url), blocked)).newPage();
    await page.goto(served.url, { waitUntil: 'load' });
    expect(await page.title()).toBe(`Berth report · ${BATCH}`);
    await page.locator('#episode-list tbody tr', { hasText: 'alpha' }).first().getByRole('link', { name: 'view' }).click();
    expect(await page.locator('.step').count()).toBe(5);
    expect(await page.locator('.verifier-output').innerText()).toContain('2 passed');
    expect(blocked).toEqual([]);
    expect((await fetch(`${served.url}episodes/nothing.html`)).status).toBe(404);
    expect((await fetch(`${served.url}../../etc/passwd`)).status).toBe(404);
  });
});
