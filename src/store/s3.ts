// The one place Berth talks S3 (the AWS SDK for JavaScript v3): files up (one PutObject for a small one, lib-storage's
// streamed multipart Upload for a large one, so a large artifact never sits whole in memory) and down, small JSON
// objects, listing and removal under a prefix.
import { DeleteObjectsCommand, GetObjectCommand, ListObjectsV2Command, NoSuchKey, PutObjectCommand, S3Client, S3ServiceException } from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, readFile, rename, rm, stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import { PassThrough, Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { StoreCredentials, StoreSettings } from '../config/results-store.ts';

/** Multipart part size: S3's smallest allowed part is 5 MiB; at most QUEUE parts of one file are in memory at once. */
const PART_BYTES = 8 * 1024 * 1024;
const QUEUE = 4;

export interface StoredObject {
  key: string;
  size: number;
}

/** SHA-256 and byte count of what passes through. */
class Digest extends Transform {
  private readonly hash = createHash('sha256');
  size = 0;
  constructor(private readonly onBytes?: (n: number) => void) {
    super();
  }
  override _transform(chunk: Buffer, _enc: BufferEncoding, done: (err?: Error | null, data?: Buffer) => void): void {
    this.hash.update(chunk);
    this.size += chunk.length;
    this.onBytes?.(chunk.length);
    done(null, chunk);
  }
  sha256(): string {
    return this.hash.digest('hex');
  }
}

// A 404 for a bucket that is not there is the store's misconfiguration, not an object never written.
const isMissing = (err: unknown): boolean =>
  err instanceof NoSuchKey || (err instanceof S3ServiceException && err.name !== 'NoSuchBucket' && (err.name === 'NoSuchKey' || err.$metadata.httpStatusCode === 404));

export class ResultsStore {
  readonly client: S3Client;

  constructor(readonly settings: StoreSettings, credentials?: StoreCredentials) {
    // The SDK is pinned in package-lock.json: its notice about Node versions of releases to come is not for Berth's users.
    process.env['AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED'] ??= 'true';
    this.client = new S3Client({
      region: settings.region,
      ...(settings.endpoint ? { endpoint: settings.endpoint } : {}),
      forcePathStyle: settings.pathStyle,
      ...(credentials ? { credentials } : {}),
      // Retries are the activity's (its retry policy), plus the SDK's few quick ones for a dropped connection.
      maxAttempts: 3,
      // Every file is checked against its SHA-256 in the manifest when read back: the SDK's own CRC32 of each body,
      // computed by default since 3.729, is CPU per request for nothing more.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
    });
  }

  get bucket(): string {
    return this.settings.bucket;
  }

  /** Uploads a file to `key` (one PUT, or a streamed multipart upload for a large one); answers its size and SHA-256. */
  async putFile(key: string, path: string, onBytes?: (n: number) => void): Promise<{ size: number; sha256: string }> {
    if ((await stat(path)).size < PART_BYTES) return this.putSmallFile(key, path, onBytes);
    const digest = new Digest(onBytes);
    // A PassThrough as the body: lib-storage takes a Transform's buffered length for the whole body's and then counts
    // the parts wrong.
    const body = new PassThrough();
    const reading = pipeline(createReadStream(path), digest, body);
    const upload = new Upload({ client: this.client, params: { Bucket: this.bucket, Key: key, Body: body }, partSize: PART_BYTES, queueSize: QUEUE });
    await Promise.all([reading, upload.done()]);
    return { size: digest.size, sha256: digest.sha256() };
  }

  /**
   * A file smaller than a part, read whole and sent in one PutObject: no bigger in memory than one part of a multipart
   * upload, and without lib-storage's stream slicing (a trial is mostly small files).
   */
  private async putSmallFile(key: string, path: string, onBytes?: (n: number) => void): Promise<{ size: number; sha256: string }> {
    const body = await readFile(path);
    await this.client.send(new PutObjectCommand({ Bucket: this.bucket, Key: key, Body: body, ContentLength: body.length }));
    onBytes?.(body.length);
    return { size: body.length, sha256: createHash('sha256').update(body).digest('hex') };
  }

  async putText(key: string, text: string, contentType = 'application/json'): Promise<void> {
    await this.client.send(new PutObjectCommand({ Bucket: this.bucket, Key: key, Body: text, ContentType: contentType }));
  }

  /** The object's text, or null when there is none. */
  async getText(key: string): Promise<string | null> {
    try {
      const out = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: key }));
      return await out.Body!.transformToString('utf8');
    } catch (err) {
      if (isMissing(err)) return null;
      throw err;
    }
  }

  /** The object's bytes, or null when there is none (for small files a reader needs whole, such as token records). */
  async getBytes(key: string): Promise<Buffer | null> {
    try {
      const out = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: key }));
      return Buffer.from(await out.Body!.transformToByteArray());
    } catch (err) {
      if (isMissing(err)) return null;
      throw err;
    }
  }

  /** Streams the object into `path` (written whole: a temporary file renamed); answers its size and SHA-256. */
  async getFile(key: string, path: string): Promise<{ size: number; sha256: string }> {
    const out = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: key }));
    await mkdir(dirname(path), { recursive: true });
    const tmp = `${path}.${process.pid}.part`;
    const digest = new Digest();
    try {
      await pipeline(out.Body as Readable, digest, createWriteStream(tmp));
      await rename(tmp, path);
    } catch (err) {
      await rm(tmp, { force: true });
      throw err;
    }
    return { size: digest.size, sha256: digest.sha256() };
  }

  /** Every object under `prefix`. */
  async list(prefix: string): Promise<StoredObject[]> {
    const found: StoredObject[] = [];
    let token: string | undefined;
    do {
      const page = await this.client.send(new ListObjectsV2Command({ Bucket: this.bucket, Prefix: prefix, ...(token ? { ContinuationToken: token } : {}) }));
      for (const o of page.Contents ?? []) if (o.Key) found.push({ key: o.Key, size: o.Size ?? 0 });
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
    return found;
  }

  /** Removes these objects (1000 a request, as S3 allows); answers how many were removed. */
  async remove(keys: string[]): Promise<number> {
    for (let i = 0; i < keys.length; i += 1000) {
      const batch = keys.slice(i, i + 1000);
      const out = await this.client.send(new DeleteObjectsCommand({ Bucket: this.bucket, Delete: { Objects: batch.map((Key) => ({ Key })), Quiet: true } }));
      const failed = out.Errors ?? [];
      if (failed.length > 0) throw new Error(`the store did not remove ${failed.length} object(s), e.g. ${failed[0]!.Key}: ${failed[0]!.Message ?? failed[0]!.Code}`);
    }
    return keys.length;
  }

  destroy(): void {
    this.client.destroy();
  }
}
