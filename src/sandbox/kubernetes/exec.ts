// One exec in a pod's container over the Kubernetes exec API (client-node's Exec: a WebSocket to the apiserver,
// v5.channel.k8s.io so the end of stdin reaches the process), and files as tar over exec, as `kubectl cp` moves them.
import { Exec, type KubeConfig, type V1Status } from '@kubernetes/client-node';
import { posix } from 'node:path';
import { PassThrough, Readable, Writable } from 'node:stream';

/** A container of a pod, as exec addresses it. */
export interface PodContainer {
  readonly namespace: string;
  readonly pod: string;
  readonly container: string;
}

export interface PodExecResult {
  exitCode: number;
  stdout: Buffer;
  stderr: Buffer;
}

/** Why an exec did not run to an exit code (the pod or container is gone, the apiserver refused). */
export class PodExecError extends Error {
  constructor(readonly target: PodContainer, readonly status: V1Status | undefined, message: string) {
    super(`exec in ${target.namespace}/${target.pod} (${target.container}): ${message}`);
    this.name = 'PodExecError';
  }
}

/**
 * The exit code a finished exec's status carries: Success is 0, a NonZeroExitCode failure names its code in
 * details.causes (reason ExitCode); any other failure is not an exit of the command (null).
 */
export function exitCodeOfStatus(status: V1Status): number | null {
  if (status.status === 'Success') return 0;
  if (status.reason !== 'NonZeroExitCode') return null;
  const cause = status.details?.causes?.find((c) => c.reason === 'ExitCode');
  const code = Number(cause?.message);
  return Number.isInteger(code) ? code : null;
}

class Collect extends Writable {
  private readonly chunks: Buffer[] = [];
  override _write(chunk: Buffer, _enc: BufferEncoding, done: () => void): void {
    this.chunks.push(chunk);
    done();
  }
  bytes(): Buffer {
    return Buffer.concat(this.chunks);
  }
}

/** argv in the container (no shell); stdin, when given, is sent and then closed. */
export async function execInPod(kc: KubeConfig, target: PodContainer, argv: string[], stdin?: Buffer | Readable): Promise<PodExecResult> {
  const stdout = new Collect();
  const stderr = new Collect();
  const input = stdin === undefined ? null : Buffer.isBuffer(stdin) ? Readable.from([stdin]) : stdin.pipe(new PassThrough());
  const got: { status?: V1Status } = {};
  let socket;
  try {
    socket = await new Exec(kc).exec(target.namespace, target.pod, target.container, argv, stdout, stderr, input, false, (st) => { got.status = st; });
  } catch (err) {
    throw new PodExecError(target, undefined, describe(err));
  }
  // The status frame comes before the server closes the socket.
  await new Promise<void>((resolve) => socket.once('close', () => resolve()));
  const final = got.status;
  if (!final) throw new PodExecError(target, undefined, 'the exec stream closed without a status (pod or apiserver gone)');
  const exitCode = exitCodeOfStatus(final);
  if (exitCode === null) throw new PodExecError(target, final, final.message ?? final.reason ?? 'failed');
  return { exitCode, stdout: stdout.bytes(), stderr: stderr.bytes() };
}

function describe(err: unknown): string {
  if (err instanceof Error) return err.message;
  // client-node rejects a refused upgrade with the ErrorEvent of the WebSocket.
  const e = err as { message?: string; error?: { message?: string } };
  return e?.error?.message ?? e?.message ?? String(err);
}

async function checked(kc: KubeConfig, target: PodContainer, argv: string[], stdin?: Buffer | Readable): Promise<Buffer> {
  const r = await execInPod(kc, target, argv, stdin);
  if (r.exitCode !== 0) {
    throw new PodExecError(target, undefined, `${argv.join(' ')} exited ${r.exitCode}: ${r.stderr.toString('utf8').trim()}`);
  }
  return r.stdout;
}

/** Unpacks a tar archive into an absolute folder of the container (created when missing). */
export async function putArchiveInPod(kc: KubeConfig, target: PodContainer, dir: string, archive: Buffer | Readable): Promise<void> {
  await checked(kc, target, ['sh', '-c', 'mkdir -p -- "$1" && exec tar -x -f - -C "$1"', 'sh', dir], archive);
}

/** A tar archive of one path of the container, its last component at the archive's root. */
export async function getArchiveFromPod(kc: KubeConfig, target: PodContainer, path: string): Promise<Buffer> {
  const clean = posix.normalize(path);
  return checked(kc, target, ['tar', '-c', '-f', '-', '-C', posix.dirname(clean), posix.basename(clean)]);
}
