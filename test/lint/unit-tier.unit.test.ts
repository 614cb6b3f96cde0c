import { Connection } from '@temporalio/client';
import Docker from 'dockerode';
import { describe, expect, it } from 'vitest';
import { temporalAddress } from '../../src/config/temporal.ts';
import { dockerAnswers } from '../../src/server/docker-check.ts';
import { startScriptedWorker } from '../helpers/temporal.ts';
import { UNIT_TIER_ENV } from '../../vitest.config.ts';

// The fast tier (vitest.config.ts, project `unit`): a unit test that reaches for an engine or Temporal must fail
// loudly, so a slow test cannot hide in `npm run test:unit`. These check that each way in is dead here.
describe('unit tier has no engine and no Temporal', () => {
  it('runs with the dead endpoints of vitest.config.ts', () => {
    for (const [key, value] of Object.entries(UNIT_TIER_ENV)) expect(process.env[key], key).toBe(value);
  });

  it('the Docker engine does not answer, through Berth and through dockerode', async () => {
    expect(await dockerAnswers(1000)).toBe(false);
    await expect(new Docker().ping()).rejects.toThrow(/ENOENT/);
  });

  it('Temporal does not answer at the address Berth and the test helpers use', async () => {
    expect(temporalAddress()).toEqual({ address: UNIT_TIER_ENV.TEMPORAL_ADDRESS, embedded: false });
    await expect(Connection.connect({ address: temporalAddress().address, connectTimeout: 2000 })).rejects.toThrow();
    await expect(startScriptedWorker('unit-tier-never-polled', {})).rejects.toThrow();
  });
});
