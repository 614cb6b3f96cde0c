import { afterEach, describe, expect, it } from 'vitest';
import { labelsFromBatchId, labelsFromTemporal } from '../../src/client/report-labels.ts';

describe('dataset and agent labels for the report header', () => {
  it.each([
    ['hello-20261130-050051-fe22', { dataset: 'hello' }],
    ['my-data.v2-20261130-050051-0a9f', { dataset: 'my-data.v2' }],
    ['custom-id', {}],
    ['hello-20261130-050051', {}],
  ])('labelsFromBatchId(%j)', (id, expected) => {
    expect(labelsFromBatchId(id)).toEqual(expected);
  });

  const saved = process.env.TEMPORAL_ADDRESS;
  afterEach(() => {
    if (saved === undefined) delete process.env.TEMPORAL_ADDRESS;
    else process.env.TEMPORAL_ADDRESS = saved;
  });

  it('gives nothing, quickly, when Temporal does not answer', async () => {
    process.env.TEMPORAL_ADDRESS = '127.0.0.1:1';
    const started = Date.now();
    expect(await labelsFromTemporal('any-batch', 1500)).toEqual({});
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('gives nothing for a batch the server does not know', async () => {
    expect(await labelsFromTemporal('no-such-batch-20261130-000000-0000')).toEqual({});
  });
});
