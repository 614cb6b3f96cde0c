// One exec on Docker: create, start, drain the output (streamed to a file when asked), read the exit code; an exec
// ended by the container's death is told apart from the command's own exit and becomes SandboxLost; one whose command
// never started says why (start-failure.ts).
import type Docker from 'dockerode';
import { PassThrough } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { SandboxLost } from '../errors.ts';
import { asSandboxError } from './loss.ts';
import { DEFAULT_OUTPUT_CAP, endedByTimeout, envList, HOST_GUARD_SEC, KILL_GRACE_SEC, withTimeout, type RawExecOptions } from '../exec.ts';
import { closeSink, demuxToSinks, openSink, TailBuffer } from '../output-capture.ts';
import type { ExecResult, SandboxHandle, StdinExecOptions, StdinProcess } from '../types.ts';
import { answeredWithin, ENGINE_ANSWER_SEC } from './engine-deadline.ts';
import { dockerNotStarted } from './start-failure.ts';


/**
 * One docker exec: create, start, drain the output, read the exit code. The engine calls (not the command, which
 * its own timeout bounds) are each bounded by `answerSec` (engine-deadline.ts).
 */
export async function runExec(docker: Docker, handle: SandboxHandle, opts: RawExecOptions, answerSec = ENGINE_ANSWER_SEC): Promise<ExecResult> {
  const container = docker.getContainer(handle.containerId);
  const stdout = new TailBuffer(opts.outputCapBytes ?? DEFAULT_OUTPUT_CAP);
  const stderr = new TailBuffer(opts.outputCapBytes ?? DEFAULT_OUTPUT_CAP);
  const started = Date.now();
  let exec: Docker.Exec;
  let stream: NodeJS.ReadableStream;
  try {
    exec = await answeredWithin(`an exec's create in ${handle.name}`, answerSec, (abortSignal) => container.exec({
      Cmd: withTimeout(opts.argv, opts.timeoutSec),
      AttachStdout: true,
      AttachStderr: true,
      Tty: false,
      User: opts.user ?? handle.user,
      WorkingDir: opts.workdir ?? handle.workdir,
      Env: envList(opts.env),
      abortSignal,
    }));
    stream = await answeredWithin(`an exec's start in ${handle.name}`, answerSec, (abortSignal) => exec.start({ hijack: true, stdin: false, abortSignal }));
  } catch (err) {
    throw asSandboxError(handle.name, err);
  }

  const file = await openSink(opts.streamToFile);
  let guardFired = false;
  const onAbort = () => (stream as NodeJS.ReadableStream & { destroy(): void }).destroy();
  opts.signal?.addEventListener('abort', onAbort, { once: true });
  const guard =
    opts.timeoutSec !== undefined && opts.timeoutSec > 0
      ? setTimeout(
          () => {
            guardFired = true;
            (stream as NodeJS.ReadableStream & { destroy(): void }).destroy();
          },
          (opts.timeoutSec + KILL_GRACE_SEC + HOST_GUARD_SEC) * 1000,
        )
      : undefined;
  try {
    await demuxToSinks(stream, stdout, stderr, file);
  } catch (err) {
    opts.signal?.throwIfAborted();
    if (!guardFired) throw asSandboxError(handle.name, err);
  } finally {
    if (guard) clearTimeout(guard);
    opts.signal?.removeEventListener('abort', onAbort);
    await closeSink(file);
  }
  opts.signal?.throwIfAborted();

  const elapsedSec = (Date.now() - started) / 1000;
  const exitCode = guardFired ? 124 : await readExitCode(docker, handle, exec, answerSec);
  const timedOut = guardFired || endedByTimeout(exitCode, elapsedSec, opts.timeoutSec);
  const result: ExecResult = {
    exitCode,
    stdout: stdout.toString(),
    stderr: stderr.toString(),
    stdoutTruncated: stdout.truncated,
    stderrTruncated: stderr.truncated,
    timedOut,
  };
  const notStarted = guardFired ? undefined : dockerNotStarted(opts.argv, opts.timeoutSec, result);
  return notStarted ? { ...result, notStarted } : result;
}

async function readExitCode(docker: Docker, handle: SandboxHandle, exec: Docker.Exec, answerSec: number): Promise<number> {
  for (let attempt = 0; ; attempt++) {
    let info: Docker.ExecInspectInfo;
    try {
      info = await answeredWithin(`an exec's inspect in ${handle.name}`, answerSec, (abortSignal) => exec.inspect({ abortSignal }));
    } catch (err) {
      throw asSandboxError(handle.name, err);
    }
    if (!info.Running && info.ExitCode !== null && info.ExitCode !== undefined) {
      // A killed container ends its execs with 137 (or leaves no code): tell that apart from the command's own.
      if (info.ExitCode === 137 || info.ExitCode === 143) await assertStillRunning(docker, handle, answerSec);
      return info.ExitCode;
    }
    if (attempt >= 50) {
      await assertRunning(docker, handle, answerSec);
      throw new Error(`exec in ${handle.name} ended its output but reports no exit code`);
    }
    await sleep(Math.min(5 * (attempt + 1), 100));
  }
}

/** A forced removal ends execs before the container's state changes: look twice. */
async function assertStillRunning(docker: Docker, handle: SandboxHandle, answerSec: number): Promise<void> {
  await assertRunning(docker, handle, answerSec);
  await sleep(300);
  await assertRunning(docker, handle, answerSec);
}

export async function assertRunning(docker: Docker, handle: SandboxHandle, answerSec = ENGINE_ANSWER_SEC): Promise<void> {
  let state: Docker.ContainerInspectInfo['State'];
  try {
    state = (await answeredWithin(`the inspect of ${handle.name}`, answerSec, (abortSignal) => docker.getContainer(handle.containerId).inspect({ abortSignal }))).State;
  } catch (err) {
    throw asSandboxError(handle.name, err);
  }
  if (!state.Running || state.Paused || state.Restarting || state.Status === 'removing') {
    throw new SandboxLost(handle.name, new Error(`container is ${state.Status}`));
  }
}

/** One docker exec with its stdin attached: the caller talks to the process while it runs (execWithStdin). */
export async function startStdinExec(docker: Docker, handle: SandboxHandle, o: StdinExecOptions, answerSec = ENGINE_ANSWER_SEC): Promise<StdinProcess> {
  try {
    const exec = await answeredWithin(`an exec's create in ${handle.name}`, answerSec, (abortSignal) => docker.getContainer(handle.containerId).exec({
      Cmd: withTimeout(o.argv, o.timeoutSec), AttachStdin: true, AttachStdout: true, AttachStderr: true, Tty: false,
      User: o.user ?? handle.user, WorkingDir: o.workdir ?? handle.workdir, Env: envList(o.env), abortSignal,
    }));
    const stream = (await answeredWithin(`an exec's start in ${handle.name}`, answerSec, (abortSignal) => exec.start({ hijack: true, stdin: true, abortSignal }))) as NodeJS.ReadWriteStream & { destroy(): void };
    const stdout = new PassThrough();
    const stderr = new PassThrough();
    docker.modem.demuxStream(stream, stdout, stderr);
    const ended = new Promise<void>((resolve) => { for (const e of ['end', 'close', 'error']) stream.on(e, () => resolve()); });
    const exited = ended.then(async () => {
      stdout.end();
      stderr.end();
      for (let i = 0; i < 20; i++) { // the engine records the exit a moment after the output ends
        const info = await exec.inspect().catch(() => null);
        if (!info || !info.Running) return info?.ExitCode ?? null;
        await sleep(25);
      }
      return null;
    });
    return { stdin: stream, stdout, stderr, exited, detach: () => stream.destroy() };
  } catch (err) {
    throw asSandboxError(handle.name, err);
  }
}
