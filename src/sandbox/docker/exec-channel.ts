// Root commands without an exec (issue 25; docs/performance-notes.md, "Commands without an exec"). A Docker exec costs a
// runc process joining the container's namespaces and a shim's work: 50 to 70 ms of CPU here, and a trivial episode
// makes two. A single sandbox's keep-alive instead ends in a small loop reading requests on the container's stdin
// (channel-protocol.ts). The worker that created the container keeps one
// attach to it (stdin and output) and sends root commands there; everything else (another user, output streamed to
// a file, a container this process did not create, a keep-alive without the loop) goes through exec as before.
import type Docker from 'dockerode';
import { SandboxLost } from '../errors.ts';
import { asSandboxError } from './loss.ts';
import { DEFAULT_OUTPUT_CAP, endedByTimeout, startText, timeoutCouldNotRun, withTimeout, type RawExecOptions } from '../exec.ts';
import { shellQuote } from '../names.ts';
import { KEEP_ALIVE_READY, KEEP_ALIVE_TAIL, keepAliveBefore } from '../seed-scripts.ts';
import { TailBuffer } from '../output-capture.ts';
import type { ExecNotStartedReason, ExecResult, SandboxHandle } from '../types.ts';
import { CHANNEL_READY, type KeepAliveStream } from './keep-alive-stream.ts';
import { CHANNEL_DIR, CHANNEL_LOOP, CHANNEL_PROCESS, ChannelParser, ChannelRequests } from '../channel-protocol.ts';

const LOOP = `${CHANNEL_LOOP}
exec sleep infinity`;

/**
 * The keep-alive's argv with the loop instead of `sleep infinity`, when it is Berth's own (`/bin/sh -c '…exec sleep
 * infinity'`) and the image has what the loop needs; the same argv otherwise.
 */
export function withExecChannel(keepAlive: readonly string[]): readonly string[] {
  const tail = `echo '${KEEP_ALIVE_READY}'\n${KEEP_ALIVE_TAIL}`;
  const head = keepAliveBefore(keepAlive, tail);
  if (head === null) return keepAlive;
  const open = [
    'if command -v tail >/dev/null 2>&1 && command -v wc >/dev/null 2>&1 &&',
    `  mkdir -p -m 700 ${CHANNEL_DIR} 2>/dev/null; then`,
    `  echo '${CHANNEL_READY}'`,
    `  exec /bin/sh -c ${shellQuote(LOOP)} ${CHANNEL_PROCESS}`,
    'fi',
    tail,
  ].join('\n');
  return ['/bin/sh', '-c', `${head}${open}`];
}

/** How the channel says it could not start a command, to a reader of the text. */
export const CHANNEL_START_FAILURE = 'berth channel: unable to start the command';
/** The line before that text, for the channel itself: `<mark> <reason> <program>`; run() takes it off the output. */
const NOT_STARTED_MARK = 'berth:not-started';

/**
 * The request's script: the working directory, the environment on top of the container's, then the argv. A missing
 * directory or program fails as an exec's start does: exit 126, the reason on stdout (in the engine's words, so the
 * text a user reads is the same either way), after the channel's own line saying which it was.
 */
export function requestScript(argv: readonly string[], workdir: string, env: Record<string, string> | undefined): string {
  const fail = (reason: ExecNotStartedReason, program: string, why: string) =>
    `{ printf '%s\\n' ${shellQuote(`${NOT_STARTED_MARK} ${reason} ${program}`)} ${shellQuote(`${CHANNEL_START_FAILURE}: ${why}`)}; exit 126; }`;
  const lines = [
    `cd -- ${shellQuote(workdir)} 2>/dev/null || ${fail('no-workdir', '', `chdir to cwd ("${workdir}") failed: no such file or directory`)}`,
    // sh exports these itself (an exec's process has neither unless the image sets them, which the channel loses).
    'unset OLDPWD PWD',
  ];
  for (const [k, v] of Object.entries(env ?? {})) lines.push(`export ${shellQuote(`${k}=${v}`)}`);
  const program = argv[0] ?? '';
  // As the engine looks a program up: an executable file on PATH (or the path given), never a shell builtin.
  lines.push(
    `found() { case "$1" in */*) [ -f "$1" ] && [ -x "$1" ]; return ;; esac; o=$IFS; IFS=:; for d in $PATH; do ` +
      `if [ -f "\${d:-.}/$1" ] && [ -x "\${d:-.}/$1" ]; then IFS=$o; return 0; fi; done; IFS=$o; return 1; }`,
    `found ${shellQuote(program)} || ${fail('no-program', program.replace(/\s/g, ' '), `exec: "${program}": executable file not found in $PATH`)}`,
    `exec ${argv.map(shellQuote).join(' ')}`,
  );
  return `${lines.join('\n')}\n`;
}

/**
 * The channel's own start failure (its mark taken off the output), or `timeout`'s, as Docker's exec reports them; the
 * result as it is when the command ran.
 */
export function channelNotStarted(argv: readonly string[], timeoutSec: number | undefined, r: ExecResult): ExecResult {
  const m = r.exitCode === 126 ? new RegExp(`^${NOT_STARTED_MARK} (\\S+) ?(.*)\\n`).exec(r.stdout) : null;
  if (m) {
    const stdout = r.stdout.slice(m[0].length);
    const reason = m[1] as ExecNotStartedReason;
    const text = startText({ stdout, stderr: r.stderr });
    return { ...r, stdout, notStarted: reason === 'no-program' ? { reason, program: m[2]!, text } : { reason, text } };
  }
  const notStarted = timeoutCouldNotRun(argv, timeoutSec, r);
  return notStarted ? { ...r, notStarted } : r;
}

/** The keep-alive's attach, kept by the worker that made the container, shared by every root command it runs there. */
export class ExecChannel {
  private readonly parser = new ChannelParser();
  private readonly requests: ChannelRequests;
  private closed = false;

  constructor(private readonly docker: Docker, private readonly handle: SandboxHandle, private readonly stream: KeepAliveStream, private readonly onClose: () => void) {
    this.requests = new ChannelRequests((request) => stream.write(request), (on) => stream.holdProcess(on));
    stream.holdProcess(false);
    stream.deliver((chunk) => this.requests.answered(this.parser.push(chunk)), () => this.close());
  }

  get open(): boolean {
    return !this.closed;
  }

  /** One command, as runExec would run it (argv under `timeout`, the last bytes of each stream kept). */
  async run(opts: RawExecOptions): Promise<ExecResult> {
    const cap = opts.outputCapBytes ?? DEFAULT_OUTPUT_CAP;
    const script = requestScript(withTimeout(opts.argv, opts.timeoutSec), opts.workdir ?? this.handle.workdir, opts.env);
    const started = Date.now();
    const got = await this.requests.request(script, cap, opts.timeoutSec, opts.signal);
    if (got === 'guard') return { exitCode: 124, stdout: '', stderr: '', stdoutTruncated: false, stderrTruncated: false, timedOut: true };
    const elapsedSec = (Date.now() - started) / 1000;
    const stdout = new TailBuffer(cap);
    const stderr = new TailBuffer(cap);
    stdout.push(got.stdout);
    stderr.push(got.stderr);
    const timedOut = endedByTimeout(got.exitCode, elapsedSec, opts.timeoutSec);
    const result: ExecResult = {
      exitCode: got.exitCode, stdout: stdout.toString(), stderr: stderr.toString(),
      stdoutTruncated: stdout.truncated || got.stdoutBytes > got.stdout.length, stderrTruncated: stderr.truncated || got.stderrBytes > got.stderr.length,
      timedOut,
    };
    return channelNotStarted(opts.argv, opts.timeoutSec, result);
  }

  /** The attach ended (the container stopped, was removed, or the engine went away): every command waiting fails. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.onClose();
    this.stream.close();
    this.requests.failAll(() => this.lossOrError());
  }

  private async lossOrError(): Promise<Error> {
    try {
      const state = (await this.docker.getContainer(this.handle.containerId).inspect()).State;
      if (!state.Running || state.Status === 'removing') return new SandboxLost(this.handle.name, new Error(`container is ${state.Status}`));
      return asSandboxError(this.handle.name, new Error('the exec channel to the keep-alive closed')) as Error;
    } catch (err) {
      return asSandboxError(this.handle.name, err) as Error;
    }
  }
}
