import { describe, expect, it } from 'vitest';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { berth } from '../helpers/cli.ts';
import { echoTask, writeDataset } from '../helpers/tasks.ts';

const buildToml = '[environment]\nworkdir = "/app"\n[agent]\ntimeout_sec = 60\n[verifier]\ntimeout_sec = 60\n';

// `berth prepare` (issue 4): builds ahead, records what is ready, lists a failed build in skipped.json.
describe('berth prepare', () => {
  it('builds build-mode images as hb__<hash>, and a failed build is skipped with stage prepare', async () => {
    const ok = echoTask('builds', 'ok', buildToml);
    ok['builds/environment/Dockerfile'] = `FROM berth-base:bookworm\nCOPY --chmod=755 tool.sh /usr/local/bin/tool\n`;
    ok['builds/environment/tool.sh'] = `#!/bin/sh\necho ${Date.now()}\n`;
    const bad = echoTask('fails', 'ok', buildToml);
    bad['fails/environment/Dockerfile'] = 'FROM berth-base:bookworm\nCOPY not-there.txt /x\n';
    const results = mkdtempSync(join(tmpdir(), 'berth-prepare-'));
    const r = await berth(['prepare', writeDataset({ ...ok, ...bad }), '--results', results, '--json']);
    expect(r.code, r.stderr).toBe(1);
    const out = JSON.parse(r.stdout);
    expect(out.prepared).toEqual([expect.objectContaining({ taskId: 'builds', ok: true, mode: 'build', built: true, image: expect.stringMatching(/^hb__[0-9a-f]{20}$/) })]);
    expect(out.skipped).toEqual([expect.objectContaining({ task_id: 'fails', stage: 'prepare', reason: expect.stringContaining('not-there.txt') })]);
    expect(JSON.parse(readFileSync(join(results, 'skipped.json'), 'utf8'))).toEqual(out.skipped);
    const again = await berth(['prepare', join(out.skipped[0].path, '..'), '--results', results, '--json']);
    expect(JSON.parse(again.stdout).prepared[0]).toMatchObject({ taskId: 'builds', built: false });
    expect(existsSync(join(process.env.BERTH_HOME ?? join(process.env.HOME!, '.berth'), 'images'))).toBe(true);
  });
});
