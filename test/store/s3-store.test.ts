// A real SeaweedFS S3 server (test/helpers/s3-server.ts) and src/store against it: the SDK's own put and get, then an
// attempt's folder uploaded (a file large enough for a multipart upload among small ones), read back byte for byte,
// absent while its manifest is missing, and removed with its batch.
import { GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { storeLocationOf } from '../../src/config/results-store.ts';
import { attemptKey, batchPrefix, downloadAttempt, filesUnder, manifestKey, readAttemptFile, readManifest, ResultsStore, uploadAttempt } from '../../src/store/index.ts';
import { startS3Server, type S3Server } from '../helpers/s3-server.ts';

const sha = (b: Buffer): string => createHash('sha256').update(b).digest('hex');

describe('the results store against SeaweedFS', () => {
  let s3: S3Server;
  let store: ResultsStore;
  const scratch = mkdtempSync(join(tmpdir(), 'berth-store-'));

  beforeAll(async () => {
    s3 = await startS3Server();
    store = new ResultsStore({ ...storeLocationOf(`s3://${s3.bucket}/t`), endpoint: s3.endpoint, region: s3.region, pathStyle: true, keepLocal: true },
      { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey });
  }, 600_000);

  afterAll(async () => {
    store?.destroy();
    await s3?.stop();
    rmSync(scratch, { recursive: true, force: true });
  });

  it('takes an object through the SDK and gives it back, and refuses a wrong secret', async () => {
    const c = s3.client();
    const body = randomBytes(1000);
    await c.send(new PutObjectCommand({ Bucket: s3.bucket, Key: 'probe/one.bin', Body: body }));
    const got = Buffer.from(await (await c.send(new GetObjectCommand({ Bucket: s3.bucket, Key: 'probe/one.bin' }))).Body!.transformToByteArray());
    expect(sha(got)).toBe(sha(body));
    c.destroy();
    const wrong = new ResultsStore({ ...storeLocationOf(`s3://${s3.bucket}`), endpoint: s3.endpoint, region: s3.region, pathStyle: true, keepLocal: true },
      { accessKeyId: s3.accessKeyId, secretAccessKey: 'not-the-secret' });
    await expect(wrong.getText('probe/one.bin')).rejects.toThrow();
    wrong.destroy();
  });

  it('answers null for an object never written, and an error naming the bucket when the bucket is not there', async () => {
    expect(await store.getText('t/never/written.json')).toBeNull();
    const noBucket = new ResultsStore({ ...storeLocationOf('s3://no-such-bucket-here/t'), endpoint: s3.endpoint, region: s3.region, pathStyle: true, keepLocal: true },
      { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey });
    await expect(noBucket.getText('t/any.json')).rejects.toThrow(/bucket/i);
    await expect(noBucket.getBytes('t/any.json')).rejects.toThrow(/bucket/i);
    noBucket.destroy();
  });

  it('uploads an attempt streamed, manifest last, and reads it back byte for byte', async () => {
    const dir = join(scratch, 'episode');
    mkdirSync(join(dir, 'turn-1', 'agent'), { recursive: true });
    mkdirSync(join(dir, 'turn-1', 'verifier'), { recursive: true });
    const files: Record<string, Buffer> = {
      'turn-1/agent/trajectory.json': Buffer.from('{"steps": []}\n'),
      'turn-1/verifier/reward.txt': Buffer.from('1\n'),
      // 20 MiB: three parts of a multipart upload.
      'turn-1/artifacts.bin': randomBytes(20 * 1024 * 1024),
      'empty.txt': Buffer.alloc(0),
      // Over the 32 KiB a file may have inside the manifest: an object of its own.
      'turn-1/agent/session.jsonl': randomBytes(40 * 1024),
    };
    for (const [p, b] of Object.entries(files)) writeFileSync(join(dir, p), b);
    const attempt = attemptKey(store.settings, 'batch-a', 'berth/batch-a/hello/r0', 'run-1');
    expect(await readManifest(store, attempt)).toBeNull();
    const m = await uploadAttempt(store, attempt, dir, { batchId: 'batch-a', workflowId: 'berth/batch-a/hello/r0', runId: 'run-1', host: 'h1' });
    expect(m.files.map((f) => f.path).sort()).toEqual(Object.keys(files).sort());
    for (const f of m.files) expect(f.sha256).toBe(sha(files[f.path]!));
    // The small files ride inside the manifest; only the larger ones are objects of their own.
    expect(m.version).toBe(2);
    expect(m.files.filter((f) => f.inline === undefined).map((f) => f.path).sort()).toEqual(['turn-1/agent/session.jsonl', 'turn-1/artifacts.bin']);
    expect((await store.list(`${attempt}/files/`)).map((o) => o.key.slice(attempt.length + 1)).sort()).toEqual(['files/turn-1/agent/session.jsonl', 'files/turn-1/artifacts.bin']);
    expect((await readAttemptFile(store, attempt, 'turn-1/verifier/reward.txt'))?.toString()).toBe('1\n');
    expect(sha((await readAttemptFile(store, attempt, 'turn-1/agent/session.jsonl'))!)).toBe(sha(files['turn-1/agent/session.jsonl']!));
    const out = join(scratch, 'back');
    const back = await downloadAttempt(store, attempt, out);
    expect(back?.files).toEqual(m.files);
    expect(filesUnder(out).sort()).toEqual(Object.keys(files).sort());
    for (const [p, b] of Object.entries(files)) expect(sha(readFileSync(join(out, p)))).toBe(sha(b));
  });

  it('refuses a file inside the manifest that does not match its hash', async () => {
    const attempt = attemptKey(store.settings, 'batch-a', 'berth/batch-a/hello/r2', 'run-1');
    const manifest = { version: 2, batchId: 'batch-a', workflowId: 'berth/batch-a/hello/r2', runId: 'run-1', host: 'h1', writtenAt: 'now',
      files: [{ path: 'reward.txt', size: 2, sha256: sha(Buffer.from('1\n')), inline: Buffer.from('0\n').toString('base64') }] };
    await store.putText(manifestKey(attempt), JSON.stringify(manifest));
    await expect(readAttemptFile(store, attempt, 'reward.txt')).rejects.toThrow(/does not match its manifest/);
    await expect(downloadAttempt(store, attempt, join(scratch, 'tampered'))).rejects.toThrow(/does not match its manifest/);
  });

  it('treats an attempt whose manifest was never written as absent', async () => {
    const attempt = attemptKey(store.settings, 'batch-a', 'berth/batch-a/hello/r1', 'run-1');
    await store.putText(`${attempt}/files/turn-1/agent/half.txt`, 'half');
    expect(await downloadAttempt(store, attempt, join(scratch, 'half'))).toBeNull();
    await store.putText(manifestKey(attempt), '{"version": 1, "files": [');
    expect(await readManifest(store, attempt)).toBeNull();
  });

  it('lists and removes every object of one batch and none of another', async () => {
    await store.putText(`${batchPrefix(store.settings, 'batch-ab')}job/result.json`, '{}');
    const a = await store.list(batchPrefix(store.settings, 'batch-a'));
    expect(a.length).toBeGreaterThanOrEqual(6); // 2 + 1 objects and manifests of r0 and r2, r1's half and its broken manifest
    expect(a.every((o) => o.key.startsWith('t/batch-a/'))).toBe(true);
    expect(await store.remove(a.map((o) => o.key))).toBe(a.length);
    expect(await store.list(batchPrefix(store.settings, 'batch-a'))).toEqual([]);
    expect(await store.list(batchPrefix(store.settings, 'batch-ab'))).toHaveLength(1);
  });
});
