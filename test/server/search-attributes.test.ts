import { afterAll, describe, expect, it } from 'vitest';
import { Connection } from '@temporalio/client';
import { spawn, type ChildProcess } from 'node:child_process';
import { findTemporalCli } from '../../src/server/binary.ts';
import { SEARCH_ATTRIBUTE_TYPES } from '../../src/config/search-attributes.ts';
import { temporalAnswers, waitFor } from '../../src/server/health.ts';
import { ensureSearchAttributes } from '../../src/server/search-attributes.ts';

// A cluster Berth did not start has none of its search attributes: the worker registers them (docs/design.md section 7).
describe('search attributes on a cluster Berth did not start', () => {
  let server: ChildProcess | undefined;
  afterAll(() => { server?.kill('SIGKILL'); });

  it('registers the missing ones, once', async () => {
    server = spawn(findTemporalCli().path, ['server', 'start-dev', '--headless', '--port', '7733', '--log-level', 'error'], { stdio: 'ignore' });
    expect(await waitFor(() => temporalAnswers('127.0.0.1:7733'), 60_000)).toBe(true);
    expect((await ensureSearchAttributes('127.0.0.1:7733')).sort()).toEqual(Object.keys(SEARCH_ATTRIBUTE_TYPES).sort());
    expect(await ensureSearchAttributes('127.0.0.1:7733')).toEqual([]);
    const connection = await Connection.connect({ address: '127.0.0.1:7733' });
    try {
      const sa = await connection.operatorService.listSearchAttributes({ namespace: 'default' });
      for (const name of Object.keys(SEARCH_ATTRIBUTE_TYPES)) expect(sa.customAttributes).toHaveProperty(name);
    } finally {
      await connection.close();
    }
  });
});
