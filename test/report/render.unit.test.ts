import { describe, expect, it } from 'vitest';
import { clip, esc, num } from '../../src/client/report-html.ts';
import { renderReport } from '../../src/client/report.ts';
import { histogramSvg } from '../../src/client/report-svg.ts';
import { row, SCRIPT_REASON, syntheticBatch } from './fixtures.ts';

describe('escaping', () => {
  it.each([
    ['<script>alert(1)</script>', '&lt;script&gt;alert(1)&lt;/script&gt;'],
    ['a & b', 'a &amp; b'],
    ['"quoted" \'single\'', '&quot;quoted&quot; &#39;single&#39;'],
    ['&lt; already', '&amp;lt; already'],
    [null, ''],
    [42, '42'],
  ])('esc(%j) = %j', (input, expected) => {
    expect(esc(input)).toBe(expected);
  });

  it('a <script> in a failure reason, a task id, a skip reason or the batch id is shown as text, never as markup', () => {
    const evil = '<script>window.__pwned = true</script>';
    const rows = [
      row({ task_id: `t${evil}`, repeat: 1, reward: 0, failure_kind: `kind${evil}`, failure_reason: SCRIPT_REASON, timings: { [`p${evil}`]: 1 } }),
    ];
    const html = renderReport(rows, {
      batchId: `b${evil}`, dataset: evil, agent: evil,
      skipped: [{ task_id: evil, path: evil, reason: evil, stage: 'load' }],
    });
    expect(html).not.toContain('<script');
    expect(html).not.toMatch(/<[^>]*\son\w+=/i);
    expect(html).toContain('&lt;script&gt;window.__pwned = true&lt;/script&gt;');
  });
});

describe('number formatting', () => {
  it.each([
    [null, '-'], [Number.NaN, '-'], [1, '1'], [0.5, '0.5'], [2 / 3, '0.667'], [0.1 + 0.2, '0.3'], [4.5 / 7, '0.643'],
  ])('num(%j) = %j', (input, expected) => {
    expect(num(input)).toBe(expected);
  });

  it('clip keeps short text and says how much it cut', () => {
    expect(clip('short', 10)).toBe('short');
    expect(clip('x'.repeat(15), 10)).toBe(`${'x'.repeat(10)}… (5 more characters)`);
  });
});

describe('renderReport', () => {
  const { rows, failed } = syntheticBatch();
  const html = renderReport(rows, {
    batchId: 'synthetic-1', dataset: 'demo', agent: 'oracle', failed,
    skipped: [{ task_id: 'delta', path: '/data/delta', reason: 'compose tasks are refused', stage: 'load' }],
  });
  const text = html.replace(/<style>[\s\S]*?<\/style>/, '').replace(/<[^>]+>/g, ' ').replace(/\s+/g, ' ');

  it('is one self-contained page: no scripts, no external resources, a CSP that forbids fetching', () => {
    expect(html.startsWith('<!doctype html>')).toBe(true);
    expect(html).not.toMatch(/<script|<link|<img|<iframe|@import|url\(/i);
    expect(html).not.toMatch(/(?:src|href)=/i);
    expect(html).not.toMatch(/https?:\/\//);
    expect(html).toContain(`content="default-src 'none'; style-src 'unsafe-inline'"`);
  });

  it('has the header counts and the mean over unmasked rows', () => {
    expect(text).toContain('Batch synthetic-1');
    expect(text).toMatch(/dataset demo · agent oracle/);
    expect(text).toMatch(/episodes 9 .*scored 7 .*masked 1 .*failed 1 .*skipped tasks 1 .*mean reward 0\.643/);
  });

  it('has the pass@k table with the overall row', () => {
    expect(text).toMatch(/task repeat 1 repeat 2 repeat 3 n c pass@1 pass@2 pass@3/);
    expect(text).toMatch(/alpha 1 1 0 3 2 0\.667 1 1/);
    expect(text).toMatch(/beta 0 masked 1 2 1 0\.5 1 -/);
    expect(text).toMatch(/gamma 0\.5 1 — 2 1 0\.5 1 -/);
    expect(text).toMatch(/all tasks 0\.556 1 1 \(1 of 3 tasks\)/);
  });

  it('lists failure kinds with masked or scored and an example, and the failed workflows', () => {
    expect(text).toMatch(/harbor:missing_reward scored \(0\) 1 beta #1/);
    expect(text).toMatch(/provider_unavailable masked 1 beta #2 sandbox lost/);
    expect(text).toContain('1 episode workflow failed or was cancelled');
    // gamma #2's masked first attempt was retried into a success: only the newest attempt counts.
    expect(text).not.toContain('harbor:seed_failed');
  });

  it('has phase timings and the skipped tasks', () => {
    expect(text).toMatch(/phase episodes mean \(s\) median \(s\) max \(s\) seed 8 /);
    expect(text).toMatch(/agent 7 2\.857 3 6/);
    expect(text).toMatch(/delta load compose tasks are refused \/data\/delta/);
  });

  it('draws the histogram as inline SVG with one bar per bin', () => {
    const svg = histogramSvg([{ lo: 0, hi: 0.5, count: 2 }, { lo: 0.5, hi: 1, count: 0 }]);
    expect(svg.match(/<rect /g)).toHaveLength(2);
    expect(html).toMatch(/<section id="distribution"><h2>Reward distribution<\/h2><svg /);
  });

  it('handles a batch with no rows', () => {
    const empty = renderReport([], { batchId: 'nothing', failed: 2 });
    expect(empty).toContain('No unmasked rows.');
    expect(empty).toContain('2 episode workflows failed or were cancelled');
    expect(empty).toContain('dataset <b>unknown</b>');
  });
});
