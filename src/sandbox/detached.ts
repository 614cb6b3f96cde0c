import { SandboxLost, CommandNotStarted, DetachedProcessLost } from './errors.ts';
import type { ExecPort } from './driver.ts';
import { isPlainRoot, KILL_GRACE_SEC } from './exec.ts';
import type {
  DetachedLaunchOptions,
  DetachedLaunchResult,
  DetachedOutput,
  DetachedResult,
  DetachedStartOptions,
  DetachedStartResult,
  DetachedWaitOptions,
  SandboxHandle,
} from './types.ts';
import { SANDBOX_LAYOUT } from '../task/index.ts';

/** Markers of detached processes (made at seed, mode 1777): outside /logs, where the agent works and may remove things. */
export const DETACHED_BASE = `${SANDBOX_LAYOUT.berthState}/run`;
/** Claims of detached keys: whoever makes `<key>` here prepares and starts the process. */
export const CLAIMS_DIR = `${SANDBOX_LAYOUT.berthState}/claims`;

/*
 * The marker directory is created with an atomic `mkdir`: whoever creates it launches the process,
 * anyone else only re-attaches. The process runs in its own session (setsid), reparented to the
 * container's init, so it outlives the exec and the Node process that started it. Its exit code is
 * written to exit.tmp and renamed to `exit`, so a reader never sees a half-written code; then every
 * waiter's FIFO (`wait.*`, see WAIT_SCRIPT) gets a line, opened read-write so that a FIFO whose waiter
 * is gone never blocks the wrapper.
 */
/** Runs $d/command.sh in its own session with "$@" (timeout) in front; its exit code lands in $d/exit. */
const RUN_IN_BACKGROUND = `S=; command -v setsid >/dev/null 2>&1 && S=setsid
$S sh -c '
  d="$1"; out="$2"; shift 2
  "$@" bash "$d/command.sh" > "$out" 2>&1 < /dev/null
  rc=$?
  if [ $# -gt 0 ] && { [ $rc -eq 124 ] || [ $rc -eq 137 ]; }; then : > "$d/timed_out"; fi
  echo $rc > "$d/exit.tmp" && mv "$d/exit.tmp" "$d/exit"
  for f in "$d"/wait.*; do [ -p "$f" ] && echo exit 1<>"$f"; done 2>/dev/null
' berth-detached "$d" "$out" "$@" > /dev/null 2>&1 < /dev/null &
echo $! > "$d/pid"`;

const START_SCRIPT = `
d="$1"; out="$2"; shift 2
[ -d ${DETACHED_BASE} ] || mkdir -p -m 1777 ${DETACHED_BASE} 2>/dev/null
if ! mkdir "$d" 2>/dev/null; then
  if [ -d "$d" ]; then echo exists; exit 0; fi
  echo "cannot create marker directory $d" >&2; exit 90
fi
printf '%s' "$BERTH_DETACHED_CMD" > "$d/command.sh"
unset BERTH_DETACHED_CMD
${RUN_IN_BACKGROUND}
echo started
`;

const POLL_SCRIPT = `
d="$1"
# The process is gone; its wrapper writes the exit file a moment later (up to 0.3 s in 10 ms looks).
settle() { j=0; while [ ! -f "$1/exit" ] && [ "$j" -lt 30 ]; do sleep 0.01 2>/dev/null || sleep 1; j=$((j + 1)); done; }
report() { read -r rc < "$d/exit" || :; t=0; [ -f "$d/timed_out" ] && t=1; echo "exit $rc $t"; }
if [ -f "$d/exit" ]; then report
elif [ ! -d "$d" ]; then echo missing
elif [ ! -s "$d/pid" ]; then echo starting
elif read -r p < "$d/pid" || :; [ -d "/proc/$p" ]; then echo running
else settle "$d"; if [ -f "$d/exit" ]; then report; else echo dead; fi
fi
`;

export function detachedDir(key: string): string {
  if (!/^[A-Za-z0-9_.-]+$/.test(key) || key.startsWith('.')) {
    throw new Error(`detached key "${key}" must use only letters, digits, '_', '-' and '.', and not start with '.'`);
  }
  return `${DETACHED_BASE}/${key}`;
}

export async function startDetached(
  driver: ExecPort,
  handle: SandboxHandle,
  opts: DetachedStartOptions,
): Promise<DetachedStartResult> {
  const dir = detachedDir(opts.key);
  const timeout =
    opts.timeoutSec !== undefined && opts.timeoutSec > 0
      ? ['timeout', '-k', String(KILL_GRACE_SEC), String(opts.timeoutSec)]
      : [];
  const res = await driver.exec(handle, {
    argv: ['sh', '-c', START_SCRIPT, 'berth-start', dir, opts.outputPath ?? `${dir}/output`, ...timeout],
    user: opts.user,
    workdir: opts.workdir,
    env: { ...opts.env, BERTH_DETACHED_CMD: opts.command },
    outputCapBytes: 64 * 1024,
  });
  const word = res.stdout.trim();
  if (res.exitCode !== 0 || (word !== 'started' && word !== 'exists')) {
    throw new Error(
      `could not start detached process "${opts.key}" in ${handle.name} (exit ${res.exitCode}): ${res.stderr.trim() || word}`,
    );
  }
  return { started: word === 'started', dir };
}

type PollState =
  | { state: 'exit'; exitCode: number; timedOut: boolean }
  | { state: 'missing' | 'starting' | 'running' | 'dead' };

export async function pollDetached(driver: ExecPort, handle: SandboxHandle, key: string): Promise<PollState> {
  const res = await driver.exec(handle, {
    argv: ['sh', '-c', POLL_SCRIPT, 'berth-poll', detachedDir(key)],
    user: 'root',
    workdir: '/',
    outputCapBytes: 4096,
  });
  const [word, code, flag] = res.stdout.trim().split(/\s+/);
  if (word === 'exit') return { state: 'exit', exitCode: Number(code), timedOut: flag === '1' };
  if (word === 'missing' || word === 'starting' || word === 'running' || word === 'dead') return { state: word };
  throw new Error(`unexpected answer polling detached process "${key}" in ${handle.name}: ${res.stdout}${res.stderr}`);
}

const STARTING_PATIENCE_MS = 30_000;

/** Reports $st as `berth:wait $st`, then, for an exit with $tailb > 0, the tail of $out. */
const REPORT = `echo "berth:wait $st"
  if [ "$tailb" -gt 0 ] && [ "\${st%% *}" = exit ]; then
    if [ ! -e "$out" ]; then echo "berth:tail none"
    elif [ ! -r "$out" ]; then echo "berth:tail unreadable"
    elif [ ! -s "$out" ]; then echo "berth:tail 0"
    else n=$(wc -c < "$out"); n=$((n + 0)); echo "berth:tail $n"; [ "$n" -gt 0 ] && tail -c "$tailb" "$out"; fi
  fi;;`;

/*
 * One exec that claims, prepares, starts and waits (docs/design.md section 3, Surviving restarts), each part
 * chosen by a letter of $1: c = claim the key (an atomic mkdir; "started" when the marker already exists),
 * p = run the root prepare script, s = start (the marker's atomic mkdir, as in START_SCRIPT), w = wait a
 * bounded time for the exit file, then report it and the output's tail. Answers are `berth:` lines on
 * stdout; the tail, when asked for, comes last, after `berth:tail <size>`.
 */
const LAUNCH_SCRIPT = `
mode="$1"; d="$2"; out="$3"; claim="$4"; stage="$5"; polls="$6"; every="$7"; tailb="$8"; wd="$9"; shift 9
# The process is gone; its wrapper writes the exit file a moment later (up to 0.3 s in 10 ms looks).
settle() { j=0; while [ ! -f "$1/exit" ] && [ "$j" -lt 30 ]; do sleep 0.01 2>/dev/null || sleep 1; j=$((j + 1)); done; }
cmd="$BERTH_DETACHED_CMD"; prep="$BERTH_PREPARE"; bound="\${BERTH_WAIT_BOUND:-}"; bg=
unset BERTH_DETACHED_CMD BERTH_PREPARE BERTH_WAIT_BOUND
case "$mode" in *c*)
  if [ -d "$d" ]; then
    echo "berth:claim started"; [ -n "$stage" ] && rm -rf "$stage"; mode=w
  else
    [ -d ${DETACHED_BASE} ] || { mkdir -p ${DETACHED_BASE} && chmod 1777 ${DETACHED_BASE}; }
    [ -d "\${claim%/*}" ] || mkdir -p -m 700 "\${claim%/*}"
    if mkdir "$claim" 2>/dev/null; then echo "berth:claim claimed"
    else echo "berth:claim claimed_by_other"; exit 0; fi
  fi;;
esac
case "$mode" in *p*)
  if [ -n "$prep" ]; then
    BERTH_STAGE="$stage" sh -c "set -e
$prep" berth-prepare >&2 < /dev/null || { echo "berth:prepare failed $?"; exit 0; }
  fi;;
esac
case "$mode" in *s*)
  # The process starts in the working directory, or in / when the agent of an earlier turn removed it.
  cd -- "$wd" 2>/dev/null || cd /
  [ -d ${DETACHED_BASE} ] || mkdir -p -m 1777 ${DETACHED_BASE} 2>/dev/null
  if mkdir "$d" 2>/dev/null; then
    printf '%s' "$cmd" > "$d/command.sh"
${RUN_IN_BACKGROUND}
    bg=$!
    echo "berth:start started"
  elif [ -d "$d" ]; then echo "berth:start exists"
  else echo "cannot create marker directory $d" >&2; exit 90
  fi;;
esac
case "$mode" in *w*)
  i=0; st=
  if [ -n "$bg" ] && [ -n "$bound" ]; then
    # Started by this exec, so the shell's child: its end wakes the wait, with no looks (each sleep is a process of
    # its own); a timer ends the wait at the bound. Then the looks below read the exit file.
    # The trap stays: a timer's signal sent just as the process ended must not end this shell.
    late=; trap 'late=1' USR1
    ( trap 'kill $t 2>/dev/null; exit 0' TERM
      sleep "$bound" 2>/dev/null & t=$!; wait $t || { sleep 1 & t=$!; wait $t; }
      kill -s USR1 $$ ) > /dev/null 2>&1 &
    tm=$!
    wait "$bg"
    kill "$tm" 2>/dev/null
    [ -n "$late" ] && i=$polls
  fi
  while :; do
    if [ -f "$d/exit" ]; then read -r rc < "$d/exit" || :; t=0; [ -f "$d/timed_out" ] && t=1; st="exit $rc $t"; break; fi
    if [ ! -d "$d" ]; then st=missing; break; fi
    if [ -s "$d/pid" ] && { read -r p < "$d/pid" || :; [ ! -d "/proc/$p" ]; }; then
      settle "$d"; [ -f "$d/exit" ] && continue; st=dead; break
    fi
    [ "$i" -ge "$polls" ] && break
    # The first looks come fast (a quick process is seen within milliseconds), then every $every seconds.
    s="$every"; if [ "$i" -lt 4 ]; then s=0.005; elif [ "$i" -lt 12 ]; then s=0.015; fi
    i=$((i + 1)); sleep "$s" 2>/dev/null || sleep 1
  done
  if [ -z "$st" ]; then if [ -s "$d/pid" ]; then st=running; else st=starting; fi; fi
  ${REPORT}
esac
`;

const TAIL_MARK = 'berth:tail ';


/** How long one wait exec may block, and how often it looks: short and fine first, then longer and coarser. */
function waitBound(round: number, capMs: number): { polls: number; every: string } {
  const [ms, every] = round === 0 ? [1000, 0.025] : round === 1 ? [2000, 0.1] : round === 2 ? [5000, 0.25] : [10_000, 0.5];
  const bound = Math.max(every * 1000, Math.min(ms, capMs));
  return { polls: Math.max(1, Math.round(bound / (every * 1000))), every: String(every) };
}

interface LaunchAnswer {
  claim?: 'started' | 'claimed' | 'claimed_by_other';
  prepareFailed?: number;
  start?: 'started' | 'exists';
  wait?: { state: 'exit'; exitCode: number; timedOut: boolean } | { state: 'missing' | 'starting' | 'running' | 'dead' };
  output?: DetachedOutput;
}

async function launchExec(
  driver: ExecPort,
  handle: SandboxHandle,
  mode: string,
  opts: Partial<DetachedLaunchOptions> & { key: string; user: string; round?: number; capMs?: number; signal?: AbortSignal },
): Promise<{ answer: LaunchAnswer; stderr: string; stdout: string; exitCode: number }> {
  const dir = detachedDir(opts.key);
  const timeout =
    opts.timeoutSec !== undefined && opts.timeoutSec > 0
      ? ['timeout', '-k', String(KILL_GRACE_SEC), String(opts.timeoutSec)]
      : [];
  const { polls, every } = waitBound(opts.round ?? 0, opts.capMs ?? Infinity);
  const tailBytes = mode.includes('w') ? opts.tailBytes ?? 0 : 0;
  const env: Record<string, string> = { ...(mode.includes('s') ? opts.env : {}) };
  if (mode.includes('s')) env['BERTH_DETACHED_CMD'] = opts.command ?? '';
  if (mode.includes('s') && mode.includes('w')) env['BERTH_WAIT_BOUND'] = (polls * Number(every)).toFixed(3);
  if (mode.includes('p') && opts.prepareScript) env['BERTH_PREPARE'] = opts.prepareScript;
  const res = await driver.exec(handle, {
    argv: [
      'sh', '-c', LAUNCH_SCRIPT, 'berth-launch', mode, dir, opts.outputPath ?? `${dir}/output`,
      `${CLAIMS_DIR}/${opts.key}`, opts.stageDir ?? '', String(mode.includes('w') ? polls : 0), every, String(tailBytes),
      opts.workdir ?? handle.workdir, ...timeout,
    ],
    user: opts.user,
    // The start changes to the working directory itself: an exec into a directory that is gone would never start.
    workdir: '/',
    env,
    outputCapBytes: tailBytes + 64 * 1024,
    signal: opts.signal,
  });
  if (res.notStarted) {
    const what = mode.includes('c') ? 'claim' : 'start';
    throw new CommandNotStarted(res.notStarted, `could not ${what} detached process "${opts.key}" in ${handle.name} (exit ${res.exitCode}): ${res.notStarted.text}`);
  }
  return { ...parseAnswer(res.stdout), stderr: res.stderr, exitCode: res.exitCode };
}

/** The `berth:` lines of a launch or wait script, and the output's tail after `berth:tail <size>`. */
function parseAnswer(stdout: string): { answer: LaunchAnswer; stdout: string } {
  const at = stdout.indexOf(`\n${TAIL_MARK}`);
  const head = at < 0 ? (stdout.startsWith(TAIL_MARK) ? '' : stdout) : stdout.slice(0, at);
  const answer: LaunchAnswer = {};
  for (const line of head.split('\n')) {
    const [tag, a, b, c] = line.trim().split(/\s+/);
    if (tag === 'berth:claim' && (a === 'started' || a === 'claimed' || a === 'claimed_by_other')) answer.claim = a;
    else if (tag === 'berth:prepare' && a === 'failed') answer.prepareFailed = Number(b);
    else if (tag === 'berth:start' && (a === 'started' || a === 'exists')) answer.start = a;
    else if (tag === 'berth:wait') {
      if (a === 'exit') answer.wait = { state: 'exit', exitCode: Number(b), timedOut: c === '1' };
      else if (a === 'missing' || a === 'starting' || a === 'running' || a === 'dead') answer.wait = { state: a };
    }
  }
  const tailAt = at < 0 ? (stdout.startsWith(TAIL_MARK) ? 0 : -1) : at + 1;
  if (tailAt >= 0) {
    const nl = stdout.indexOf('\n', tailAt);
    const word = stdout.slice(tailAt + TAIL_MARK.length, nl < 0 ? undefined : nl);
    if (word === 'none' || word === 'unreadable') answer.output = word;
    else answer.output = { size: Number(word), tail: nl < 0 ? '' : stdout.slice(nl + 1) };
  }
  return { answer, stdout: head };
}

function unexpected(what: string, key: string, handle: SandboxHandle, r: { stderr: string; stdout: string; exitCode: number }): Error {
  return new Error(`could not ${what} detached process "${key}" in ${handle.name} (exit ${r.exitCode}): ${r.stderr.trim() || r.stdout.trim() || 'no answer'}`);
}

function resultOf(key: string, w: { exitCode: number; timedOut: boolean }, output: DetachedOutput | undefined, outputPath?: string): DetachedResult {
  return { exitCode: w.exitCode, timedOut: w.timedOut, outputPath: outputPath ?? `${detachedDir(key)}/output`, ...(output !== undefined ? { output } : {}) };
}

/**
 * Claims the key, prepares (root), starts and waits a little, in as few execs as the user allows: one when
 * the process runs as root, else a root exec to claim and prepare and one as the user to start and wait.
 */
export async function launchDetached(
  driver: ExecPort,
  handle: SandboxHandle,
  opts: DetachedLaunchOptions,
): Promise<DetachedLaunchResult> {
  const user = opts.user ?? handle.user;
  const dir = detachedDir(opts.key);
  const claim = opts.claim !== false;
  const prepareMode = opts.prepareScript ? 'p' : '';
  const first = isPlainRoot(user) ? `${claim ? 'c' : ''}${prepareMode}sw` : `${claim ? 'c' : ''}${prepareMode}`;
  let r = first === '' ? undefined : await launchExec(driver, handle, first, { ...opts, user: isPlainRoot(user) ? user : 'root' });
  if (r) {
    if (claim && !r.answer.claim) throw unexpected('claim', opts.key, handle, r);
    if (r.answer.claim === 'claimed_by_other') return { state: 'claimed_by_other', dir };
    if (r.answer.prepareFailed !== undefined) {
      if (r.answer.claim === 'claimed') await releaseClaim(driver, handle, opts.key).catch(() => undefined);
      throw new Error(`preparing the detached process "${opts.key}" in ${handle.name} failed (${r.answer.prepareFailed}): ${r.stderr.trim()}`);
    }
  }
  let state: DetachedLaunchResult['state'] = r?.answer.claim === 'started' ? 'exists' : 'started';
  if (state === 'started' && !r?.answer.start) {
    if (r && first.includes('s')) throw unexpected('start', opts.key, handle, r);
    const claimed = r?.answer.claim === 'claimed';
    try {
      r = await launchExec(driver, handle, 'sw', { ...opts, user });
      if (!r.answer.start) throw unexpected('start', opts.key, handle, r);
    } catch (err) {
      // Nothing started: give the claim back, so a retried attempt prepares and starts instead of waiting for a start.
      if (claimed && !(err instanceof SandboxLost)) await releaseClaim(driver, handle, opts.key).catch(() => undefined);
      throw err;
    }
  }
  if (r?.answer.start === 'exists') state = 'exists';
  if (!r?.answer.wait) return { state, dir };
  const w = r.answer.wait;
  if (w.state === 'exit') return { state, dir, done: resultOf(opts.key, w, r.answer.output, opts.outputPath) };
  if (w.state === 'missing') throw goneError(opts.key, handle);
  if (w.state === 'dead') throw lostError(opts.key, handle);
  return { state, dir };
}

async function releaseClaim(driver: ExecPort, handle: SandboxHandle, key: string): Promise<void> {
  await driver.exec(handle, {
    argv: ['sh', '-c', 'if [ ! -d "$1" ]; then rmdir "$2"; fi', 'berth-release', detachedDir(key), `${CLAIMS_DIR}/${key}`],
    user: 'root',
    workdir: '/',
  });
}

/** SandboxLost when the sandbox no longer runs: the driver refuses an exec into a stopped or removed one as lost. */
async function assertReachable(driver: ExecPort, handle: SandboxHandle): Promise<void> {
  await driver.exec(handle, { argv: ['true'], user: 'root', workdir: '/', outputCapBytes: 1024 });
}

function lostError(key: string, handle: SandboxHandle): DetachedProcessLost {
  return new DetachedProcessLost(`detached process "${key}" in ${handle.name} ended without writing an exit code (killed from outside?)`);
}

/** The marker folder is not there (never started, or removed from inside the sandbox): the sandbox itself answered. */
function goneError(key: string, handle: SandboxHandle): DetachedProcessLost {
  return new DetachedProcessLost(`no detached process "${key}" in ${handle.name}: its marker ${detachedDir(key)} is not there (never started, or removed from inside the sandbox)`);
}

/*
 * Waits inside the sandbox for the process to end without looking every moment (docs/design.md section 3, Surviving
 * restarts): the waiter makes a FIFO `wait.<pid>` in the marker directory, holds it open, and only then looks at
 * the exit file, so either it sees the exit or the wrapper, which writes the exit file before it writes to every
 * FIFO there, wakes it. Between wake-ups it blocks in bash's `read -t` (no process started per look) and looks
 * again every `tick` seconds (a wrapper killed from outside writes nothing, nor one started before waiters had
 * FIFOs); it answers after `rounds` ticks at most, or after 2 ticks of "starting". Bash, because the detached
 * process itself runs under bash; without mkfifo it only ticks. $1 dir, $2 tick, $3 rounds, $4 tail bytes, $5 output.
 */
const WAIT_SCRIPT = `
d="$1"; tick="$2"; rounds="$3"; tailb="$4"; out="$5"
settle() { j=0; while [ ! -f "$1/exit" ] && [ "$j" -lt 30 ]; do sleep 0.01 2>/dev/null || sleep 1; j=$((j + 1)); done; }
f="$d/wait.$$"; fifo=
if [ -d "$d" ] && mkfifo -m 666 "$f" 2>/dev/null; then exec 3<>"$f"; fifo=1; trap 'rm -f "$f"' EXIT; fi
i=0; st=
while :; do
  if [ -f "$d/exit" ]; then
    read -r code < "$d/exit"; flag=0; [ -f "$d/timed_out" ] && flag=1; st="exit $code $flag"; break
  fi
  if [ ! -d "$d" ]; then st=missing; break; fi
  pid=; [ -s "$d/pid" ] && read -r pid < "$d/pid"
  if [ -n "$pid" ]; then
    if [ ! -d "/proc/$pid" ]; then settle "$d"; [ -f "$d/exit" ] && continue; st=dead; break; fi
  elif [ "$i" -ge 2 ]; then st=starting; break
  fi
  if [ "$i" -ge "$rounds" ]; then st=running; break; fi
  i=$((i + 1))
  if [ -n "$fifo" ]; then read -r -t "$tick" _ <&3; else sleep "$tick"; fi
done
case x in x)
  ${REPORT}
esac
`;

/** Seconds between the waiter's own looks, and how many it takes before answering "running" (then Node asks again). */
const WAIT_TICK_SEC = 5;
const WAIT_ROUNDS = 60;
/** Beyond the waiter's own bound, how long its answer may be late before the wait is looked at from outside. */
const WAIT_GRACE_MS = 60_000;

/**
 * Waits for a detached process with one attached exec that the process's end wakes (WAIT_SCRIPT): nothing polls,
 * so a waiting episode costs almost nothing. onPoll runs every `pollMs` (default 10 s) while it waits; a throw
 * from it, or the signal, ends the wait. A removed sandbox or a lost engine ends the exec at once; an exec that
 * stays silent past its bound is dropped, and the wait goes on after checking that the sandbox still runs.
 */
export async function waitDetached(
  driver: ExecPort,
  handle: SandboxHandle,
  key: string,
  opts: DetachedWaitOptions = {},
): Promise<DetachedResult> {
  const pollMs = opts.pollMs ?? 10_000;
  const started = Date.now();
  for (;;) {
    opts.signal?.throwIfAborted();
    const stop = new AbortController();
    const onAbort = () => stop.abort();
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    let pollFailed: { err: unknown } | undefined;
    let late = false;
    const beat = setInterval(() => {
      Promise.resolve(opts.onPoll?.({ elapsedMs: Date.now() - started })).catch((err: unknown) => { pollFailed = { err }; stop.abort(); });
    }, pollMs);
    const watchdog = setTimeout(() => { late = true; stop.abort(); }, WAIT_TICK_SEC * WAIT_ROUNDS * 1000 + WAIT_GRACE_MS);
    let r: { answer: LaunchAnswer; stderr: string } | undefined;
    try {
      const res = await driver.exec(handle, {
        argv: ['bash', '-c', WAIT_SCRIPT, 'berth-wait', detachedDir(key), String(WAIT_TICK_SEC), String(WAIT_ROUNDS),
          String(opts.tailBytes ?? 0), opts.outputPath ?? `${detachedDir(key)}/output`],
        user: 'root',
        workdir: '/',
        outputCapBytes: (opts.tailBytes ?? 0) + 64 * 1024,
        signal: stop.signal,
      });
      r = { answer: parseAnswer(res.stdout).answer, stderr: res.stderr };
    } catch (err) {
      if (pollFailed) throw pollFailed.err;
      opts.signal?.throwIfAborted();
      if (!late) throw err;
    } finally {
      clearInterval(beat);
      clearTimeout(watchdog);
      opts.signal?.removeEventListener('abort', onAbort);
    }
    if (pollFailed) throw pollFailed.err;
    if (!r) {
      await assertReachable(driver, handle);
      continue;
    }
    const s = r.answer.wait;
    if (!s) throw new Error(`unexpected answer waiting for detached process "${key}" in ${handle.name}: ${r.stderr.trim()}`);
    if (s.state === 'exit') return resultOf(key, s, r.answer.output, opts.outputPath);
    if (s.state === 'missing') throw goneError(key, handle);
    if (s.state === 'dead' || (s.state === 'starting' && Date.now() - started > STARTING_PATIENCE_MS)) throw lostError(key, handle);
    await opts.onPoll?.({ elapsedMs: Date.now() - started });
  }
}
