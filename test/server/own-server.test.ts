import { describe, expect, it } from 'vitest';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findTemporalCli } from '../../src/server/binary.ts';
import { ensureServer, serverPid, stopServer } from '../../src/server/devserver.ts';
import { temporalAnswers } from '../../src/server/health.ts';

// Stops a server, so it runs its own on its own port and home (docs/design.md section 7, Tests).
describe('dev server lifecycle on a private port', () => {
  it('starts detached, reuses, and stops', async () => {
    process.env.TEMPORAL_CLI = findTemporalCli().path;
    process.env.BERTH_HOME = mkdtempSync(join(tmpdir(), 'berth-home-'));
    process.env.BERTH_TEMPORAL_PORT = '7533';
    process.env.BERTH_UI_PORT = '8533';
    const first = await ensureServer();
    expect(first).toMatchObject({ address: '127.0.0.1:7533', started: true });
    expect(serverPid()).toBe(first.pid);
    expect((await fetch('http://localhost:8533/')).status).toBe(200);
    const second = await ensureServer();
    expect(second.started).toBe(false);
    expect(await stopServer()).toBe(true);
    expect(await temporalAnswers('127.0.0.1:7533', 1000)).toBe(false);
  });
});
