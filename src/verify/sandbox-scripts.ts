// The shell run inside the sandbox around test.sh. Everything runs through the provider's `bash -c`, as root
// unless noted, so an image without bash fails the very first exec (reported as verifier_error).
import { mkdirUnlessThere, removeIfThere, shellQuote } from '../sandbox/index.ts';
import type { ExecResult } from '../sandbox/index.ts';
import { SANDBOX_LAYOUT } from '../task/index.ts';

export const TESTS_DIR = SANDBOX_LAYOUT.testsDir;
export const VERIFIER_LOGS = SANDBOX_LAYOUT.verifierLogs;
export const ARTIFACTS_LOGS = SANDBOX_LAYOUT.artifactsLogs;
export const TRAJECTORY_PATH = SANDBOX_LAYOUT.trajectory;
export const TEST_STDOUT = 'test-stdout.txt';

/** Tools test.sh needs (spec: bash and timeout, else verifier_error) and tools transfers need (else provider_unavailable). */
export const START_TOOLS = ['timeout'] as const;
export const TRANSFER_TOOLS = ['tar', 'gzip', 'find'] as const;

const MARK_START = 'berth-missing-start:';
const MARK_TRANSFER = 'berth-missing-transfer:';
const MARK_SHIPS = 'berth-ships-test-sh';
const MARK_READY = 'berth-ready';

/**
 * `berth_has DIR`: whether DIR holds anything, dot files included, seen by the shell's own globbing (a `find` or
 * `mkdir` costs a process, and every verification runs these on folders that are usually empty or already there).
 */
const HAS_ENTRIES = 'berth_has() { for f in "$1"/* "$1"/.[!.]* "$1"/..?*; do if [ -e "$f" ] || [ -L "$f" ]; then return 0; fi; done; return 1; }';

/** A folder at `dir`, replacing a symlink or file the agent left in its place (the folder's contents stay). */
function realDir(dir: string): string {
  const d = shellQuote(dir);
  return [`if [ -L ${d} ] || { [ -e ${d} ] && [ ! -d ${d} ]; }; then rm -rf -- ${d}; fi`, mkdirUnlessThere(dir)].join('\n');
}

/** Empties a folder's contents (made a real folder first); keeps `keep` if regular files. */
function emptyContents(dir: string, keep: readonly string[]): string {
  const d = shellQuote(dir);
  const kept = keep.length === 0 ? '' : ` ! \\( -type f \\( ${keep.map((k) => `-name ${shellQuote(k)}`).join(' -o ')} \\) \\)`;
  return `if berth_has ${d}; then find ${d} -mindepth 1 -maxdepth 1${kept} -exec rm -rf -- {} +; fi`;
}

/**
 * Empties /tests and /logs/verifier (except sidecar inputs) and removes the previous transcript. /logs and
 * /logs/agent are made folders again when the agent removed them or left a file or link there (under Harbor's
 * Docker environment they are mounts the agent cannot replace): the turn is verified, never masked for it. The two
 * log folders get their mode in one chmod (each is a process in the sandbox).
 */
export function clearScript(inputs: readonly string[], clearTests = true): string {
  return [
    HAS_ENTRIES,
    ...(clearTests ? [realDir(TESTS_DIR), `chmod 755 ${shellQuote(TESTS_DIR)}`] : []),
    realDir(SANDBOX_LAYOUT.logsDir),
    realDir(VERIFIER_LOGS),
    realDir(SANDBOX_LAYOUT.agentLogs),
    `chmod 777 ${shellQuote(VERIFIER_LOGS)} ${shellQuote(SANDBOX_LAYOUT.agentLogs)}`,
    ...(clearTests ? [emptyContents(TESTS_DIR, [])] : []),
    emptyContents(VERIFIER_LOGS, inputs),
    removeIfThere(TRAJECTORY_PATH, '-rf'),
  ].join('\n');
}

/** Checks the tools, reports whether the image ships /tests/test.sh, then clears (only when nothing is missing). */
export function preflightScript(clear: string | null): string {
  const check = (v: string, label: string, tools: readonly string[]) =>
    `${v}=''; for t in ${tools.join(' ')}; do command -v "$t" >/dev/null 2>&1 || ${v}="$${v} $t"; done; echo "${label}$${v}"`;
  return [
    check('ms', MARK_START, START_TOOLS),
    check('mt', MARK_TRANSFER, TRANSFER_TOOLS),
    `if [ -f ${TESTS_DIR}/test.sh ]; then echo ${MARK_SHIPS}; fi`,
    'if [ -n "$ms$mt" ]; then exit 0; fi',
    'set -e',
    clear ?? 'true',
    `echo ${MARK_READY}`,
  ].join('\n');
}

export interface Preflight {
  missingStart: string[];
  missingTransfer: string[];
  shipsTestSh: boolean;
  /** The clear ran to the end. */
  ready: boolean;
}

export function parsePreflight(stdout: string): Preflight {
  const lines = stdout.split('\n').map((l) => l.trim());
  const list = (mark: string) =>
    (lines.find((l) => l.startsWith(mark)) ?? mark).slice(mark.length).split(' ').filter(Boolean);
  return {
    missingStart: list(MARK_START),
    missingTransfer: list(MARK_TRANSFER),
    shipsTestSh: lines.includes(MARK_SHIPS),
    ready: lines.includes(MARK_READY),
  };
}

/** /logs/verifier up to this size comes back in test.sh's own exec instead of a separate archive request. */
export const SNAPSHOT_MAX_KB = 256;
const SNAPSHOT_BEGIN = 'berth-snapshot-begin';
const SNAPSHOT_END = 'berth-snapshot-end';
const ARTIFACTS_EMPTY = 'berth-artifacts-empty';
const VERIFIER_LOGS_GONE = 'berth-verifier-logs-gone';

/**
 * test.sh under the caller's `timeout`, from the working directory (or from / when the agent removed it: the exec
 * itself starts in /, since an exec into a folder that is gone never starts), its output redirected inside the
 * container so it never crosses the wire. When it returns in time, the same exec reports whether /logs/verifier is
 * still a folder and /logs/artifacts empty and, when /logs/verifier is small and readable, sends it back as a base64
 * tar; anything unusual leaves the snapshot out (copied as before).
 */
export function runTestShCommand(workdir: string): string {
  const v = shellQuote(VERIFIER_LOGS);
  return [
    `cd -- ${shellQuote(workdir)} 2>/dev/null || cd /`,
    `bash ${TESTS_DIR}/test.sh > ${VERIFIER_LOGS}/${TEST_STDOUT} 2>&1`,
    `if [ -L ${v} ] || [ ! -d ${v} ]; then echo ${VERIFIER_LOGS_GONE}; exit 0; fi`,
    `a=${ARTIFACTS_LOGS}`,
    HAS_ENTRIES,
    `if [ -d "$a" ] && [ ! -L "$a" ] && [ -r "$a" ] && [ -x "$a" ] && ! berth_has "$a"; then echo ${ARTIFACTS_EMPTY}; fi`,
    // du prints "<size>\t<folder>": the shell keeps the size (a cut would be one more process).
    `k=$(du -s -k --apparent-size ${VERIFIER_LOGS} 2>/dev/null); k=\${k%%[!0-9]*}`,
    `if [ -n "$k" ] && [ "$k" -le ${SNAPSHOT_MAX_KB} ] && command -v base64 >/dev/null 2>&1; then`,
    `  echo ${SNAPSHOT_BEGIN}`,
    `  if (set -o pipefail; tar -C ${posixDirname(VERIFIER_LOGS)} -cf - ${posixBasename(VERIFIER_LOGS)} | base64); then echo ${SNAPSHOT_END}; fi`,
    'fi',
    'exit 0',
  ].join('\n');
}

const posixDirname = (p: string) => p.slice(0, p.lastIndexOf('/')) || '/';
const posixBasename = (p: string) => p.slice(p.lastIndexOf('/') + 1);

export interface TestReport {
  /** /logs/verifier as a tar (its folder first), when it came back whole. */
  snapshot: Buffer | null;
  /** /logs/artifacts was an empty folder when test.sh returned. */
  artifactsEmpty: boolean;
  /** test.sh removed /logs/verifier or left a file or link in its place: no reward file, nothing to copy. */
  verifierLogsGone?: true;
}

export function parseTestReport(res: Pick<ExecResult, 'stdout' | 'stdoutTruncated'>): TestReport {
  const lines = res.stdout.split('\n');
  if (lines.includes(VERIFIER_LOGS_GONE)) return { snapshot: null, artifactsEmpty: false, verifierLogsGone: true };
  const artifactsEmpty = lines.includes(ARTIFACTS_EMPTY);
  const begin = lines.indexOf(SNAPSHOT_BEGIN);
  const end = lines.indexOf(SNAPSHOT_END);
  if (res.stdoutTruncated || begin < 0 || end < begin) return { snapshot: null, artifactsEmpty };
  const b64 = lines.slice(begin + 1, end).join('');
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(b64)) return { snapshot: null, artifactsEmpty };
  return { snapshot: Buffer.from(b64, 'base64'), artifactsEmpty };
}

/**
 * Why an exec never started its command (no bash, no timeout, an unknown user), or null when it ran: the driver says
 * so (ExecResult.notStarted); test.sh's own output went to the file, not here.
 */
export function startFailure(res: ExecResult): string | null {
  const cannot = res.notStarted;
  if (!cannot) return null;
  const { text } = cannot;
  if (cannot.reason === 'no-user') return `${text}; set [verifier].user to a user that exists in the image, or a numeric uid`;
  if (cannot.reason !== 'no-program') return text;
  if (cannot.program === 'bash') return `the image has no bash (${text}); use an image with bash, timeout, tar, gzip and find (Debian or Ubuntu based)`;
  if (cannot.program === 'sh') return `the service has no shell (${text}); a command runs under sh -c, so the image needs /bin/sh`;
  if (cannot.program === 'timeout') return `the image has no timeout (${text}); use an image with coreutils' timeout`;
  return text;
}
