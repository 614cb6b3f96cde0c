// A single sandbox's keep-alive attached before it starts, as `docker run` attaches: one engine call that first
// says when the root setup is done (its ready line) and then, when the keep-alive ends in the request loop
// (exec-channel.ts), carries the loop's stdin and answers for as long as the container runs.
import type Docker from 'dockerode';
import { Writable } from 'node:stream';
import { KEEP_ALIVE_READY } from '../seed-scripts.ts';

/** What the keep-alive prints instead of KEEP_ALIVE_READY when its loop serves requests (KEEP_ALIVE_READY prefixes it). */
export const CHANNEL_READY = `${KEEP_ALIVE_READY}; channel`;

export type ReadyLine = 'ready' | 'channel' | 'ended';

type Attached = NodeJS.ReadWriteStream & { destroy(): void; ref?: () => void; unref?: () => void };

const TAIL_BYTES = 4096;
const discard = () => new Writable({ write: (_c, _e, done) => done() });

export class KeepAliveStream {
  /** Settles on the ready line (which one), or on the stream's end when the setup failed or the container went. */
  readonly ready: Promise<ReadyLine>;
  private settle!: (seen: ReadyLine) => void;
  private tail = '';
  private seen = false;
  private ended = false;
  private sink: ((chunk: Buffer) => void) | undefined;
  private held: Buffer[] = [];
  private onEnd: (() => void) | undefined;

  private constructor(container: Docker.Container, private readonly stream: Attached) {
    this.ready = new Promise((resolve) => { this.settle = resolve; });
    (container.modem as Docker['modem']).demuxStream(stream, new Writable({ write: (chunk: Buffer, _e, done) => { this.output(chunk); done(); } }), discard());
    const end = () => {
      if (this.ended) return;
      this.ended = true;
      this.settle('ended');
      this.onEnd?.();
    };
    stream.on('end', end);
    stream.on('close', end);
    stream.on('error', end);
  }

  /**
   * Attached with its stdin when the keep-alive may read requests on it. Before the container starts nothing is missed;
   * after (a Compose group's main), `logs` replays what it already wrote.
   */
  static async attach(container: Docker.Container, how: { stdin: boolean; logs: boolean }): Promise<KeepAliveStream> {
    const stream = how.stdin
      ? await container.attach({ stream: true, logs: how.logs, stdin: true, stdout: true, stderr: true, hijack: true })
      : await container.attach({ stream: true, logs: how.logs, stdout: true, stderr: false });
    return new KeepAliveStream(container, stream as unknown as Attached);
  }

  // The demux hands over whole frames, and the ready line is one write, so it never straddles two of them.
  private output(chunk: Buffer): void {
    if (this.seen) {
      if (this.sink) this.sink(chunk);
      else this.held.push(chunk);
      return;
    }
    this.tail = (this.tail + chunk.toString('latin1')).slice(-TAIL_BYTES);
    const seen = this.tail.includes(CHANNEL_READY) ? 'channel' : this.tail.includes(KEEP_ALIVE_READY) ? 'ready' : undefined;
    if (!seen) return;
    this.seen = true;
    this.settle(seen);
  }

  get open(): boolean {
    return !this.ended;
  }

  /** What the keep-alive writes after its ready line goes to `sink`; `onEnd` runs once when the attach ends. */
  deliver(sink: (chunk: Buffer) => void, onEnd: () => void): void {
    this.sink = sink;
    this.onEnd = onEnd;
    for (const c of this.held.splice(0)) sink(c);
    if (this.ended) onEnd();
  }

  write(line: string): void {
    this.stream.write(line);
  }

  /** While nothing waits on it, the attach does not keep the worker's process running. */
  holdProcess(hold: boolean): void {
    if (hold) this.stream.ref?.();
    else this.stream.unref?.();
  }

  close(): void {
    this.stream.destroy();
  }
}
