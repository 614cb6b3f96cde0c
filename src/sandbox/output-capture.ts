import { createWriteStream, type WriteStream } from 'node:fs';
import { once } from 'node:events';

/** Keeps the last `cap` bytes written to it, in a ring that grows up to `cap` (no per-chunk garbage). */
export class TailBuffer {
  private ring = Buffer.alloc(0);
  private start = 0;
  private size = 0;
  truncated = false;

  constructor(private readonly cap: number) {}

  push(chunk: Buffer): void {
    if (chunk.length === 0) return;
    if (this.cap <= 0) {
      this.truncated = true;
      return;
    }
    if (chunk.length > this.cap) {
      this.truncated = true;
      chunk = chunk.subarray(chunk.length - this.cap);
    }
    this.grow(Math.min(this.cap, this.size + chunk.length));
    const overflow = this.size + chunk.length - this.ring.length;
    if (overflow > 0) {
      this.truncated = true;
      this.start = (this.start + overflow) % this.ring.length;
      this.size -= overflow;
    }
    let pos = (this.start + this.size) % this.ring.length;
    let rest = chunk;
    while (rest.length > 0) {
      const n = Math.min(rest.length, this.ring.length - pos);
      rest.copy(this.ring, pos, 0, n);
      rest = rest.subarray(n);
      pos = (pos + n) % this.ring.length;
    }
    this.size += chunk.length;
  }

  private grow(wanted: number): void {
    if (wanted <= this.ring.length) return;
    const next = Buffer.alloc(Math.min(this.cap, Math.max(wanted, this.ring.length * 2, 4096)));
    const linear = this.linear();
    linear.copy(next, 0);
    this.ring = next;
    this.start = 0;
  }

  private linear(): Buffer {
    const end = this.start + this.size;
    if (end <= this.ring.length) return this.ring.subarray(this.start, end);
    return Buffer.concat([this.ring.subarray(this.start), this.ring.subarray(0, end - this.ring.length)]);
  }

  toString(): string {
    return this.linear().toString('utf8');
  }
}

/**
 * Reads Docker's multiplexed exec stream (8-byte frame headers: stream type, 3 zero bytes,
 * big-endian length) incrementally and with backpressure: the socket is only read as fast as the
 * file sink drains, and payloads are handed on as slices, so a huge output never piles up in memory.
 */
export async function demuxToSinks(
  stream: NodeJS.ReadableStream,
  stdout: TailBuffer,
  stderr: TailBuffer,
  file: WriteStream | undefined,
): Promise<void> {
  const header = Buffer.alloc(8);
  let headerFill = 0;
  let frameLeft = 0;
  let sink = stdout;
  for await (const raw of stream as AsyncIterable<Buffer | string>) {
    let chunk = typeof raw === 'string' ? Buffer.from(raw) : raw;
    while (chunk.length > 0) {
      if (frameLeft === 0) {
        const n = Math.min(8 - headerFill, chunk.length);
        chunk.copy(header, headerFill, 0, n);
        headerFill += n;
        chunk = chunk.subarray(n);
        if (headerFill < 8) break;
        headerFill = 0;
        sink = header[0] === 2 ? stderr : stdout;
        frameLeft = header.readUInt32BE(4);
        continue;
      }
      const payload = chunk.subarray(0, frameLeft);
      chunk = chunk.subarray(payload.length);
      frameLeft -= payload.length;
      sink.push(payload);
      if (file && !file.write(payload)) await once(file, 'drain');
    }
  }
}

export async function openSink(path: string | undefined): Promise<WriteStream | undefined> {
  if (!path) return undefined;
  const file = createWriteStream(path);
  await once(file, 'open');
  return file;
}

export async function closeSink(file: WriteStream | undefined): Promise<void> {
  if (!file) return;
  await new Promise<void>((resolve, reject) => file.end((err?: Error | null) => (err ? reject(err) : resolve())));
}
