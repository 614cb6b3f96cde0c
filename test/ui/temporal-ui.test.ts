// The Temporal Web UI reads like the batch (docs/design.md section 4, search attributes and summaries).
// Explored against UI 2.54.1 (the dev server's): the workflow list has no summary column (its list
// API carries no user metadata), so an episode's staticSummary is checked where the UI renders it:
// on the batch workflow's timeline (one bar per child, labelled with its summary) and on the
// episode's "User Metadata" tab. Search attributes are a JSON block on the "Search Attributes" tab.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { startBatch } from '../../src/client/batch.ts';
import { uiUrl } from '../../src/config/temporal.ts';
import type { ResultRow } from '../../src/workflows/types.ts';
import { startTestWorkers, type TestCluster } from '../helpers/temporal.ts';
import { artifactPath, launchChromium, repoRoot } from './browser.ts';

const POLL = { timeout: 45_000, intervals: [250, 500, 1000, 2000] };

/**
 * Docker adding or removing a container's network interface makes chromium abort a navigation with
 * net::ERR_NETWORK_CHANGED (other tests start containers all the time): navigate again.
 */
async function open(page: Page, url: string): Promise<void> {
  for (let tries = 1; ; tries++) {
    try {
      await page.goto(url, { waitUntil: 'domcontentloaded' });
      return;
    } catch (err) {
      if (tries >= 5 || !/net::ERR_/.test(String(err))) throw err;
      await page.waitForTimeout(500 * tries);
    }
  }
}

/** The text of the page and of its frames (the UI renders summaries as Markdown in an iframe). */
async function pageText(page: Page): Promise<string> {
  const texts = await Promise.all(page.frames().map((f) => f.locator('body').innerText({ timeout: 2000 }).catch(() => '')));
  return texts.join('\n');
}

/**
 * The page's text once `want` shows up. With `reloadEveryMs`, reloads when that long passed
 * without it (a list does not refresh by itself, visibility may lag a closed workflow, and on a loaded
 * machine the UI's own call to the server can time out into its 500 page).
 */
async function untilText(page: Page, want: RegExp, opts: { reloadEveryMs?: number } = {}): Promise<string> {
  let text = '';
  let loadedAt = Date.now();
  await expect.poll(async () => {
    text = await pageText(page);
    if (want.test(text)) return true;
    if (opts.reloadEveryMs && Date.now() - loadedAt > opts.reloadEveryMs) {
      await open(page, page.url()).catch(() => {});
      loadedAt = Date.now();
    }
    return false;
  }, { ...POLL, message: `page never showed ${want}` }).toBe(true);
  return text;
}

const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
/** Matches text that contains every part, in any order. */
const allOf = (...parts: string[]) => new RegExp(`^${parts.map((p) => `(?=[\\s\\S]*${escapeRe(p)})`).join('')}`);

describe('Temporal Web UI shows a real batch', () => {
  let cluster: TestCluster;
  let browser: Browser;
  let page: Page;
  let batchId: string;
  let rows: ResultRow[];

  beforeAll(async () => {
    cluster = await startTestWorkers('ui');
    const handle = await startBatch({
      dataset: join(repoRoot, 'examples', 'hello'), agent: 'oracle', repeats: 2,
      resultsDir: mkdtempSync(join(tmpdir(), 'berth-ui-results-')), taskQueue: cluster.taskQueue, client: cluster.client,
    });
    batchId = handle.batchId;
    rows = (await handle.wait()).rows;
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1800, height: 1000 } });
  });

  afterAll(async () => {
    await browser?.close();
    await cluster?.stop();
  });

  it('the batch ran: two scored episodes', () => {
    expect(rows.map((r) => [r.workflow_id, r.reward, r.mask_sample])).toEqual([
      [`berth/${batchId}/hello/1`, 1, false],
      [`berth/${batchId}/hello/2`, 1, false],
    ]);
  });

  it('lists the episode workflows under BerthBatch="<id>" with task, outcome and reward columns, and the batch timeline labels each with its summary', async () => {
    const listUrl = `${uiUrl()}/namespaces/default/workflows?query=${encodeURIComponent(`BerthBatch="${batchId}"`)}`;
    await open(page, listUrl);
    try {
      const ids = [1, 2].map((r) => `berth/${batchId}/hello/${r}`);
      await untilText(page, allOf(...ids), { reloadEveryMs: 8000 });
      for (const id of ids) {
        const row = page.getByRole('row').filter({ has: page.getByRole('link', { name: id, exact: true }) });
        await expect.poll(() => row.innerText(), POLL).toMatch(/completed[\s\S]*episodeWorkflow/i);
      }
      const batchRow = page.getByRole('row').filter({ has: page.getByRole('link', { name: `berth/${batchId}`, exact: true }) });
      expect(await batchRow.innerText()).toContain('batchWorkflow');

      // What a user would do to read outcomes in the list: show Berth's search attributes as columns.
      await page.getByRole('button', { name: 'Configure Columns' }).click();
      for (const c of ['BerthTask', 'BerthOutcome', 'BerthReward']) await page.getByRole('button', { name: `Add ${c} column` }).click();
      for (const c of ['Run ID', 'End']) await page.getByRole('button', { name: `Remove ${c} column` }).click();
      await page.getByRole('button', { name: 'Close' }).filter({ visible: true }).click();
      await expect.poll(() => page.getByText('Configure Workflows Table').isVisible(), POLL).toBe(false);
      const headers = (await page.getByRole('columnheader').allInnerTexts()).map((h) => h.trim()).filter(Boolean);
      expect(headers).toEqual(expect.arrayContaining(['Workflow ID', 'BerthTask', 'BerthOutcome', 'BerthReward']));
      for (const id of ids) {
        const cells = page.getByRole('row').filter({ has: page.getByRole('link', { name: id, exact: true }) }).getByRole('cell');
        await expect.poll(async () => (await cells.allInnerTexts()).map((c) => c.trim()), POLL)
          .toEqual(expect.arrayContaining([id, 'episodeWorkflow', 'hello', 'scored', '1']));
      }
    } finally {
      await page.screenshot({ path: artifactPath('ui-list.png'), fullPage: true });
    }

    await page.getByRole('link', { name: `berth/${batchId}`, exact: true }).first().click();
    try {
      const text = await untilText(page, allOf('hello · repeat 1 · oracle', 'hello · repeat 2 · oracle'), { reloadEveryMs: 8000 });
      expect(text).toContain(`berth/${batchId}`);
    } finally {
      await page.screenshot({ path: artifactPath('ui-batch-timeline.png'), fullPage: true });
    }
  });

  it('an episode page shows its summary, BerthOutcome "scored" and BerthReward', async () => {
    const id = `berth/${batchId}/hello/1`;
    await open(page, `${uiUrl()}/namespaces/default/workflows/${encodeURIComponent(id)}`);
    try {
      await untilText(page, new RegExp(escapeRe(id)), { reloadEveryMs: 8000 });

      await page.getByRole('tab', { name: 'User Metadata' }).click();
      const meta = await untilText(page, /Summary[\s\S]*hello · repeat 1 · oracle/);
      expect(meta).not.toContain('hello · repeat 2 · oracle');

      await page.getByRole('tab', { name: 'Search Attributes' }).click();
      const attrs = await untilText(page, /"BerthOutcome":\s*"scored"/);
      expect(attrs).toMatch(/"BerthReward":\s*1\b/);
      expect(attrs).toMatch(new RegExp(`"BerthBatch":\\s*"${escapeRe(batchId)}"`));
      expect(attrs).toMatch(/"BerthTask":\s*"hello"/);
    } finally {
      await page.screenshot({ path: artifactPath('ui-episode.png'), fullPage: true });
    }
  });
});
