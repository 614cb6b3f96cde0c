import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Command } from 'commander';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { registerReport } from '../../src/cli/report.ts';
import { UserError } from '../../src/cli/output.ts';
import { ResultsFolder } from '../../src/client/results.ts';
import { syntheticBatch } from './fixtures.ts';

async function report(args: string[]): Promise<string> {
  const program = new Command('berth').exitOverride();
  registerReport(program);
  const lines: string[] = [];
  const log = vi.spyOn(console, 'log').mockImplementation((...a: unknown[]) => { lines.push(a.join(' ')); });
  const write = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => { lines.push(String(chunk)); return true; });
  try {
    await program.parseAsync(['node', 'berth', 'report', ...args]);
  } finally {
    log.mockRestore();
    write.mockRestore();
  }
  return lines.join('\n').trim();
}

function resultsFolder(dir: string, opts: { metrics?: Record<string, unknown> } = {}): void {
  const { rows, failed } = syntheticBatch();
  const folder = new ResultsFolder(dir);
  folder.finish(rows, failed);
  folder.writeSkipped([{ task_id: 'delta', path: '/d', reason: 'refused', stage: 'load' }]);
  if (opts.metrics) {
    const m = JSON.parse(readFileSync(join(dir, 'metrics.json'), 'utf8'));
    writeFileSync(join(dir, 'metrics.json'), JSON.stringify({ ...m, ...opts.metrics }));
  }
}

describe('berth report', () => {
  let cwd: string;
  let work: string;
  beforeEach(() => {
    cwd = process.cwd();
    work = mkdtempSync(join(tmpdir(), 'berth-report-cli-'));
    process.chdir(work);
  });
  afterEach(() => { process.chdir(cwd); });

  it('reads results/<BATCH>/ by default, writes report.html there and prints its path', async () => {
    const batch = 'demo-20261130-050051-fe22';
    resultsFolder(join(work, 'results', batch));
    const out = await report([batch]);
    expect(out).toBe(join(work, 'results', batch, 'report.html'));
    const html = readFileSync(out, 'utf8');
    expect(html).toContain(`Batch ${batch}`);
    expect(html).toContain('dataset <b>demo</b>');
    expect(html).toContain('pass@3');
    expect(html).toContain('<td>delta</td>');
    expect(html).toMatch(/id="card-failed"><div class="k">failed<\/div><div class="v">1</);
  });

  it('--results DIR --out FILE --json prints {"report": path}; metrics.json may name the dataset and agent', async () => {
    const dir = join(work, 'elsewhere');
    resultsFolder(dir, { metrics: { dataset: 'from-metrics', agent: 'nop' } });
    const out = join(work, 'pages', 'r.html');
    const printed = JSON.parse(await report(['custom-id', '--results', dir, '--out', out, '--json']));
    expect(printed).toEqual({ report: out });
    expect(readFileSync(out, 'utf8')).toMatch(/dataset <b>from-metrics<\/b> · agent <b>nop<\/b>/);
    expect(existsSync(join(dir, 'report.html'))).toBe(false);
  });

  it('a batch with no results folder: says to collect its rows or pass --results', async () => {
    const err = await report(['nope-batch']).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UserError);
    expect((err as Error).message).toContain(`No results folder for batch nope-batch at ${join(work, 'results', 'nope-batch')}`);
    expect((err as Error).message).toContain('npx berth results nope-batch');
    expect((err as Error).message).toContain('--results DIR');
  });

  it('a results folder without rollouts.jsonl: the same advice', async () => {
    mkdirSync(join(work, 'results', 'empty'), { recursive: true });
    const err = await report(['empty']).catch((e: unknown) => e);
    expect((err as Error).message).toMatch(/has no rollouts\.jsonl.*npx berth results empty/);
  });
});
