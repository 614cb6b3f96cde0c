// The keep-alive's request loop and its wire format, shared by the drivers that talk to it (docker/exec-channel.ts over
// the container's attach, kubernetes/pod-channel.ts over the pod's): each request is a script run as root in the
// background, its output kept in files, and answered whole on the keep-alive's output under a lock, so answers never
// interleave. ChannelRequests keeps a driver's requests waiting for their answers.
import { randomBytes } from 'node:crypto';
import { HOST_GUARD_SEC, KILL_GRACE_SEC } from './exec.ts';

/** The loop's last argument, so a process list tells it apart (docker/keep-alive.ts waits for it as for `sleep infinity`). */
export const CHANNEL_PROCESS = 'berth-channel';
/** Root-owned, out of the agent's and the verifier's folders. */
export const CHANNEL_DIR = '/run/berth-channel';

/** What a keep-alive prints when its loop ended (something in the sandbox killed it): no answer will come. */
export const CHANNEL_ENDED = 'berth:ch-ended';

/** The loop: reads requests on its stdin until it ends; what follows it (a keep-alive's tail) is the caller's. */
export const CHANNEL_LOOP = `D=${CHANNEL_DIR}
respond() {
  o="$D/$1.out"; e="$D/$1.err"
  # One wc for both sizes ("N out M err T total"), none when both are empty; a missing file counts as empty.
  if [ -s "$o" ] || [ -s "$e" ]; then set -- "$1" "$2" "$3" $(wc -c "$o" "$e" 2>/dev/null); else set -- "$1" "$2" "$3"; fi
  ot=\${4:-0}; et=\${6:-0}
  case "$ot$et" in *[!0-9]*) ot=0; et=0 ;; esac
  ol=$ot; el=$et
  [ "$ol" -gt "$3" ] && ol=$3
  [ "$el" -gt "$3" ] && el=$3
  # The lock is a file made with O_EXCL (noclobber), so taking it starts no process.
  set -C
  n=0
  until true > "$D/.lock" 2>/dev/null; do
    n=$((n + 1)); [ "$n" -gt 500 ] && rm -f "$D/.lock"
    [ -d "$D" ] || mkdir -p -m 700 "$D"
    sleep 0.01 2>/dev/null || sleep 1
  done
  printf 'berth:ch %s %s %s %s %s %s\\n' "$1" "$2" "$ol" "$el" "$ot" "$et"
  [ "$ol" -gt 0 ] && tail -c "$ol" "$o"
  [ "$el" -gt 0 ] && tail -c "$el" "$e"
  rm -f "$D/.lock" "$o" "$e"
}
[ ! -e "$D/.lock" ] || rm -f "$D/.lock"
while IFS= read -r line; do
  id=\${line%% *}; rest=\${line#* }; cap=\${rest%% *}; n=\${rest#* }
  case "$id" in ''|*[!0-9a-f]*) continue ;; esac
  case "$cap" in ''|*[!0-9]*) continue ;; esac
  case "$n" in ''|*[!0-9]*) continue ;; esac
  # The request's script: its next n lines, read by the shell itself.
  s=''
  while [ "$n" -gt 0 ] && IFS= read -r l; do s="$s$l
"; n=$((n - 1)); done
  # Twice in the background: the request's process is init's child (reaped there), not this loop's. Its answer goes
  # to the keep-alive's own output, which it keeps.
  ( (
    [ -d "$D" ] || mkdir -p -m 700 "$D"
    ( eval "$s" ) > "$D/$id.out" 2> "$D/$id.err" < /dev/null; rc=$?
    respond "$id" "$rc" "$cap"
  ) < /dev/null & )
done`;

/** A request on the loop's stdin: `id cap n`, then the script's n lines, which the loop reads with the shell's own `read`. */
export function requestLine(id: string, cap: number, script: string): string {
  const body = script.endsWith('\n') ? script : `${script}\n`;
  return `${id} ${cap} ${body.split('\n').length - 1}\n${body}`;
}

export interface ChannelAnswer {
  id: string;
  exitCode: number;
  stdout: Buffer;
  stderr: Buffer;
  /** The whole output's sizes in the container (what was sent is the last `cap` bytes of each). */
  stdoutBytes: number;
  stderrBytes: number;
}

const HEADER = /^berth:ch ([0-9a-f]+) (\d+) (\d+) (\d+) (\d+) (\d+)$/;

/** Reads answers off the keep-alive's output: a header line, then that many bytes of stdout and of stderr. */
export class ChannelParser {
  private buf: Buffer = Buffer.alloc(0);

  /** `onLine`: each line that is not an answer (a keep-alive's own, CHANNEL_ENDED). */
  constructor(private readonly onLine?: (line: string) => void) {}

  push(chunk: Buffer): ChannelAnswer[] {
    this.buf = this.buf.length === 0 ? chunk : Buffer.concat([this.buf, chunk]);
    const out: ChannelAnswer[] = [];
    for (;;) {
      const nl = this.buf.indexOf(0x0a);
      if (nl < 0) return out;
      const m = HEADER.exec(this.buf.subarray(0, nl).toString('latin1'));
      if (!m) {
        // Not an answer (nothing else should be written here after the ready line): skipped.
        this.onLine?.(this.buf.subarray(0, nl).toString('latin1'));
        this.buf = this.buf.subarray(nl + 1);
        continue;
      }
      const [ol, el] = [Number(m[3]), Number(m[4])];
      if (this.buf.length < nl + 1 + ol + el) return out;
      const body = this.buf.subarray(nl + 1);
      out.push({
        id: m[1]!, exitCode: Number(m[2]), stdout: Buffer.from(body.subarray(0, ol)), stderr: Buffer.from(body.subarray(ol, ol + el)),
        stdoutBytes: Number(m[5]), stderrBytes: Number(m[6]),
      });
      this.buf = Buffer.from(body.subarray(ol + el));
    }
  }
}

interface Pending {
  resolve(answer: ChannelAnswer): void;
  reject(err: Error): void;
}

/**
 * The requests a driver sent on one channel and their answers: each request waits for its answer, its guard (the
 * budget, the kill's grace and the host's guard: 'guard' when its processes were killed by something in the sandbox,
 * say) or the caller's abort. `write` puts a request on the loop's stdin; `hold(true)` while any request waits (the
 * attach keeps the process running only then).
 */
export class ChannelRequests {
  private readonly pending = new Map<string, Pending>();

  constructor(private readonly write: (request: string) => void, private readonly hold: (on: boolean) => void) {}

  /** Answers read off the keep-alive's output, each to the request it names. */
  answered(answers: readonly ChannelAnswer[]): void {
    for (const a of answers) {
      const p = this.pending.get(a.id);
      this.pending.delete(a.id);
      p?.resolve(a);
    }
  }

  async request(script: string, cap: number, timeoutSec: number | undefined, signal?: AbortSignal): Promise<ChannelAnswer | 'guard'> {
    signal?.throwIfAborted();
    const id = randomBytes(8).toString('hex');
    const answer = new Promise<ChannelAnswer>((resolve, reject) => this.pending.set(id, { resolve, reject }));
    let guard: NodeJS.Timeout | undefined;
    let onAbort: (() => void) | undefined;
    const stopped = new Promise<'guard'>((resolve, reject) => {
      if (timeoutSec !== undefined && timeoutSec > 0) guard = setTimeout(() => resolve('guard'), (timeoutSec + KILL_GRACE_SEC + HOST_GUARD_SEC) * 1000);
      onAbort = () => reject(signal?.reason instanceof Error ? signal.reason : new Error('aborted'));
      signal?.addEventListener('abort', onAbort, { once: true });
    });
    this.hold(true);
    try {
      this.write(requestLine(id, cap, script));
      return await Promise.race([answer, stopped]);
    } finally {
      this.pending.delete(id);
      if (this.pending.size === 0) this.hold(false);
      if (guard) clearTimeout(guard);
      if (onAbort) signal?.removeEventListener('abort', onAbort);
    }
  }

  /** The channel ended: every request waiting fails with `why()`'s error (asked only when one waits). */
  failAll(why: () => Error | Promise<Error>): void {
    const waiting = [...this.pending.values()];
    this.pending.clear();
    if (waiting.length === 0) return;
    void Promise.resolve(why()).then((err) => { for (const p of waiting) p.reject(err); });
  }
}
