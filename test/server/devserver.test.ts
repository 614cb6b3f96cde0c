import { describe, expect, it } from 'vitest';
import { Connection } from '@temporalio/client';
import { RETENTION_DAYS } from '../../src/config/temporal.ts';
import { SEARCH_ATTRIBUTE_TYPES } from '../../src/config/search-attributes.ts';
import { ensureServer } from '../../src/server/devserver.ts';
import { berth } from '../helpers/cli.ts';

describe('embedded Temporal dev server (docs/design.md section 5)', () => {
  it('is reused when it already runs', async () => {
    const info = await ensureServer();
    expect(info).toMatchObject({ address: '127.0.0.1:7233', embedded: true, started: false });
  });

  it("registers Berth's search attributes with their types and keeps closed runs 30 days", async () => {
    const connection = await Connection.connect({ address: '127.0.0.1:7233' });
    try {
      const sa = await connection.operatorService.listSearchAttributes({ namespace: 'default' });
      const typeNames: Record<number, string> = { 2: 'Keyword', 3: 'Int', 4: 'Double' };
      for (const [name, type] of Object.entries(SEARCH_ATTRIBUTE_TYPES)) {
        expect(typeNames[Number(sa.customAttributes?.[name])]).toBe(type);
      }
      const ns = await connection.workflowService.describeNamespace({ namespace: 'default' });
      expect(Number(ns.config?.workflowExecutionRetentionTtl?.seconds)).toBe(RETENTION_DAYS * 86400);
    } finally {
      await connection.close();
    }
  });

  it('serves the Web UI on 8233', async () => {
    const res = await fetch('http://localhost:8233/');
    expect(res.status).toBe(200);
    expect(await res.text()).toContain('<html');
  });

  it('`berth server status` prints the gRPC address, the UI URL and the worker state', async () => {
    const r = await berth(['server', 'status']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('127.0.0.1:7233');
    expect(r.stdout).toContain('http://localhost:8233');
    const json = await berth(['server', 'status', '--json']);
    expect(JSON.parse(json.stdout)).toMatchObject({ address: '127.0.0.1:7233', ui: 'http://localhost:8233', running: true });
  });

  it('never starts a server when TEMPORAL_ADDRESS is set, and says what to do when it does not answer', async () => {
    const r = await berth(['run', 'examples/hello'], { TEMPORAL_ADDRESS: '127.0.0.1:1' }, 60_000);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('TEMPORAL_ADDRESS=127.0.0.1:1');
    expect(r.stderr).toMatch(/unset TEMPORAL_ADDRESS/);
  });
});

describe('errors a user can hit', () => {
  it('no Docker engine: says so and names the command that fixes it', async () => {
    const r = await berth(['run', 'examples/hello'], { DOCKER_HOST: 'unix:///tmp/no-such-docker.sock' }, 60_000);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('No Docker engine answers at unix:///tmp/no-such-docker.sock');
    expect(r.stderr).toContain('npm run setup');
  });

  it('a bad option: names it, shows usage, exits 2', async () => {
    const r = await berth(['run', 'examples/hello', '--concurrency', 'zero']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--concurrency takes a whole number');
  });
});
