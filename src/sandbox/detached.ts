import type Docker from 'dockerode';
import { setTimeout as sleep } from 'node:timers/promises';
import { DetachedProcessLost } from './errors.ts';
import { KILL_GRACE_SEC, runExec } from './exec.ts';
import type {
  DetachedResult,
  DetachedStartOptions,
  DetachedStartResult,
  DetachedWaitOptions,
  SandboxHandle,
} from './types.ts';

export const DETACHED_BASE = '/logs/agent/.berth';

/*
 * The marker directory is created with an atomic `mkdir`: whoever creates it launches the process,
 * anyone else only re-attaches. The process runs in its own session (setsid), reparented to the
 * container's init, so it outlives the exec and the Node process that started it. Its exit code is
 * written to exit.tmp and renamed to `exit`, so a reader never sees a half-written code.
 */
const START_SCRIPT = `
d="$1"; out="$2"; shift 2
mkdir -p -m 1777 ${DETACHED_BASE} 2>/dev/null
if ! mkdir "$d" 2>/dev/null; then
  if [ -d "$d" ]; then echo exists; exit 0; fi
  echo "cannot create marker directory $d" >&2; exit 90
fi
printf '%s' "$BERTH_DETACHED_CMD" > "$d/command.sh"
unset BERTH_DETACHED_CMD
S=; command -v setsid >/dev/null 2>&1 && S=setsid
$S sh -c '
  d="$1"; out="$2"; shift 2
  "$@" bash "$d/command.sh" > "$out" 2>&1 < /dev/null
  rc=$?
  if [ $# -gt 0 ] && { [ $rc -eq 124 ] || [ $rc -eq 137 ]; }; then : > "$d/timed_out"; fi
  echo $rc > "$d/exit.tmp" && mv "$d/exit.tmp" "$d/exit"
' berth-detached "$d" "$out" "$@" > /dev/null 2>&1 < /dev/null &
echo $! > "$d/pid"
echo started
`;

const POLL_SCRIPT = `
d="$1"
report() { echo "exit $(cat "$d/exit") $([ -f "$d/timed_out" ] && echo 1 || echo 0)"; }
if [ -f "$d/exit" ]; then report
elif [ ! -d "$d" ]; then echo missing
elif [ ! -s "$d/pid" ]; then echo starting
elif [ -d "/proc/$(cat "$d/pid")" ]; then echo running
else sleep 0.3; if [ -f "$d/exit" ]; then report; else echo dead; fi
fi
`;

export function detachedDir(key: string): string {
  if (!/^[A-Za-z0-9_.-]+$/.test(key) || key.startsWith('.')) {
    throw new Error(`detached key "${key}" must use only letters, digits, '_', '-' and '.', and not start with '.'`);
  }
  return `${DETACHED_BASE}/${key}`;
}

export async function startDetached(
  docker: Docker,
  handle: SandboxHandle,
  opts: DetachedStartOptions,
): Promise<DetachedStartResult> {
  const dir = detachedDir(opts.key);
  const timeout =
    opts.timeoutSec !== undefined && opts.timeoutSec > 0
      ? ['timeout', '-k', String(KILL_GRACE_SEC), String(opts.timeoutSec)]
      : [];
  const res = await runExec(docker, handle, {
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

export async function pollDetached(docker: Docker, handle: SandboxHandle, key: string): Promise<PollState> {
  const res = await runExec(docker, handle, {
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

export async function waitDetached(
  docker: Docker,
  handle: SandboxHandle,
  key: string,
  opts: DetachedWaitOptions = {},
): Promise<DetachedResult> {
  const pollMs = opts.pollMs ?? 1000;
  const started = Date.now();
  for (;;) {
    opts.signal?.throwIfAborted();
    const s = await pollDetached(docker, handle, key);
    const elapsedMs = Date.now() - started;
    if (s.state === 'exit') return { exitCode: s.exitCode, timedOut: s.timedOut, outputPath: `${detachedDir(key)}/output` };
    if (s.state === 'missing') {
      throw new Error(`no detached process "${key}" in ${handle.name}: start it with startDetached first`);
    }
    if (s.state === 'dead' || (s.state === 'starting' && elapsedMs > STARTING_PATIENCE_MS)) {
      throw new DetachedProcessLost(
        `detached process "${key}" in ${handle.name} ended without writing an exit code (killed from outside?)`,
      );
    }
    await opts.onPoll?.({ elapsedMs });
    await sleep(pollMs, undefined, { signal: opts.signal });
  }
}
