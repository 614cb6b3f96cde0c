// The part of verification that happens where test.sh runs (the agent's sandbox in shared mode, the verifier's in
// separate mode): check the tools, clear, upload tests/ (and the Python shim) and the transcript, run test.sh
// under `timeout` with its output redirected inside the container, copy /logs/verifier out and score it.
import { lstat, mkdir, open, readFile, rm } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { join, posix } from 'node:path';
import { SandboxLost, extractTar, inlineWriteScript, type ExecResult, type SandboxHandle, type SandboxProvider, type UploadEntry } from '../sandbox/index.ts';
import type { Task } from '../task/index.ts';
import type { AtifTrajectory } from '../trajectory/atif.ts';
import { VerificationMasked, transfer, transferFailed } from './masked.ts';
import { redactTree } from '../trajectory/redact.ts';
import { responseFromText } from './response.ts';
import { scoreVerifierOutput, verifierOutputFromFiles, type RewardOutcome } from './reward.ts';
import {
  clearScript,
  parsePreflight,
  parseTestReport,
  preflightScript,
  runTestShCommand,
  startFailure,
  TEST_STDOUT,
  TESTS_DIR,
  TRAJECTORY_PATH,
  VERIFIER_LOGS,
  type Preflight,
  type TestReport,
} from './sandbox-scripts.ts';
import { shimFiles, shimInputs } from './shim.ts';
import type { TurnVerifier } from './turn-settings.ts';

/** Reward files larger than this are read cut short (and so fail to parse: invalid_reward). */
const REWARD_FILE_CAP = 1024 * 1024;
/** How much of the end of test-stdout.txt is read back for failure_reason. */
const STDOUT_TAIL_BYTES = 64 * 1024;
const REWARD_FILES = ['reward.json', 'reward.txt'];
/** Room for a base64 snapshot of SNAPSHOT_MAX_KB of /logs/verifier and its tar headers. */
const SNAPSHOT_OUTPUT_CAP = 1024 * 1024;

/** Tools check (and the clear when given) in one exec; masks the row when test.sh could not run here. */
export async function preflight(provider: SandboxProvider, handle: SandboxHandle, clear: string | null): Promise<Preflight> {
  const res = await provider.exec(handle, { command: preflightScript(clear), user: 'root', workdir: '/', outputCapBytes: 64 * 1024 });
  return checkPreflight(res, clear, true);
}

function checkPreflight(res: ExecResult, clear: string | null, exitMustBeZero: boolean): Preflight {
  const cannot = startFailure(res);
  if (cannot) throw new VerificationMasked('verifier_error', `test.sh could not start: ${cannot}`);
  const p = parsePreflight(res.stdout);
  if (p.missingStart.length > 0) {
    throw new VerificationMasked(
      'verifier_error',
      `test.sh could not start: the image has no ${p.missingStart.join(', ')}; use an image with bash, timeout, tar, gzip and find (Debian or Ubuntu based)`,
    );
  }
  if (p.missingTransfer.length > 0) {
    throw new VerificationMasked(
      'provider_unavailable',
      `the image has no ${p.missingTransfer.join(', ')}, which verification needs to move files; use an image with bash, timeout, tar, gzip and find`,
    );
  }
  if (clear !== null && (!p.ready || (exitMustBeZero && res.exitCode !== 0))) {
    throw new VerificationMasked('verifier_error', `could not empty ${TESTS_DIR} and ${VERIFIER_LOGS} or place the test files (exit ${res.exitCode}): ${(res.stderr || res.stdout).trim()}`);
  }
  return p;
}

/**
 * For a verifier that runs as root: the tools check, the clear and placement, and test.sh in one exec (one round
 * trip fewer). The clear's few milliseconds count against test.sh's timeout.
 */
export async function preflightAndTest(provider: SandboxProvider, handle: SandboxHandle, clear: string, run: RunPlan): Promise<{ timedOut: boolean; report: TestReport }> {
  const started = Date.now();
  const res = await provider.exec(handle, {
    command: `${preflightScript(clear)}\nset +e\n${runTestShCommand(handle.workdir)}`,
    user: 'root',
    workdir: '/',
    env: run.env,
    timeoutSec: run.timeoutSec,
    outputCapBytes: SNAPSHOT_OUTPUT_CAP,
  });
  checkPreflight(res, clear, false);
  return testOutcome(res, started, run.timeoutSec);
}

/** A separate exec of the clear (and placement), for when collect hooks ran between the tools check and the clear. */
export async function runClear(provider: SandboxProvider, handle: SandboxHandle, inputs: readonly string[], placement: string | null = null): Promise<void> {
  const res = await provider.exec(handle, { command: `set -e\n${clearScript(inputs)}\n${placement ?? ''}`, user: 'root', workdir: '/', outputCapBytes: 64 * 1024 });
  const cannot = startFailure(res);
  if (cannot) throw new VerificationMasked('verifier_error', `test.sh could not start: ${cannot}`);
  if (res.exitCode !== 0) {
    throw new VerificationMasked('verifier_error', `could not empty ${TESTS_DIR} and ${VERIFIER_LOGS} or place the test files (exit ${res.exitCode}): ${(res.stderr || res.stdout).trim()}`);
  }
}

export interface UploadPlan {
  task: Task;
  turn: TurnVerifier;
  trajectory: AtifTrajectory;
  responseText: string;
  /** False when a separate verifier's image ships /tests/test.sh (and the task is not a Python verifier). */
  uploadTests: boolean;
}

/** test.sh (0755), the Python shim and the transcript, placed after the tests/ folders. */
async function verifierEntries(plan: UploadPlan): Promise<UploadEntry[]> {
  const { turn } = plan;
  const entries: UploadEntry[] = [];
  const underTests = (p: string) => posix.join(TESTS_DIR.slice(1), p);
  if (plan.uploadTests && turn.testScript && !turn.python) {
    entries.push({ name: underTests('test.sh'), content: await readFile(turn.testScript), mode: 0o755 });
  }
  if (turn.python) {
    for (const f of await shimFiles()) entries.push({ name: underTests(f.path), content: f.content, mode: f.mode });
    const taskData = isRecord(plan.task.task_data) ? plan.task.task_data : {};
    const inputs = shimInputs({
      taskData,
      response: responseFromText(plan.responseText),
      ...(turn.python.datasetVerifier ? { datasetVerifier: await readFile(turn.python.datasetVerifier) } : {}),
    });
    for (const f of inputs) entries.push({ name: underTests(f.path), content: f.content, mode: f.mode });
  }
  entries.push({ name: TRAJECTORY_PATH.slice(1), content: JSON.stringify(plan.trajectory, null, 2) + '\n', mode: 0o644 });
  return entries;
}

/** Command-line room for placing the files inside the clear's own exec (one argument is capped at 128 KiB). */
const PLACEMENT_MAX = 96 * 1024;

/**
 * A script that writes what uploadTestsAndTranscript would upload, to run in the clear's exec and save its two
 * archive requests; null when the files are too large or not plain files and folders (upload them then).
 */
export async function placementScript(plan: UploadPlan): Promise<string | null> {
  const parts: (string | null)[] = [];
  const entries = await verifierEntries(plan);
  // test.sh (0755) is among the entries, written after the folders: their own copy would be written for nothing.
  const underTests = TESTS_DIR.slice(1) + '/';
  const later = new Set(entries.filter((e) => e.name.startsWith(underTests)).map((e) => e.name.slice(underTests.length)));
  if (plan.uploadTests) for (const dir of plan.turn.testsDirs) parts.push(await inlineWriteScript(dir, TESTS_DIR, later));
  parts.push(await inlineWriteScript(entries, '/'));
  if (parts.some((p) => p === null)) return null;
  const script = parts.join('\n');
  return script.length <= PLACEMENT_MAX ? script : null;
}

/** tests/ folders in order, then one archive with test.sh (0755), the Python shim and the transcript. */
export async function uploadTestsAndTranscript(provider: SandboxProvider, handle: SandboxHandle, plan: UploadPlan): Promise<void> {
  if (plan.uploadTests) {
    for (const dir of plan.turn.testsDirs) await transfer(`uploading ${dir} to ${TESTS_DIR}`, () => provider.upload(handle, dir, TESTS_DIR));
  }
  const entries = await verifierEntries(plan);
  await transfer('uploading the verifier files and the transcript', () => provider.upload(handle, entries, '/'));
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export interface RunPlan {
  user: string;
  env: Record<string, string>;
  timeoutSec: number;
}

/** Runs test.sh; returns whether it ran past its timeout, and what came back with it. Its exit code is deliberately dropped. */
export async function runTestSh(provider: SandboxProvider, handle: SandboxHandle, run: RunPlan): Promise<{ timedOut: boolean; report: TestReport }> {
  const started = Date.now();
  const res = await provider.exec(handle, {
    command: runTestShCommand(handle.workdir),
    user: run.user,
    workdir: '/',
    env: run.env,
    timeoutSec: run.timeoutSec,
    outputCapBytes: SNAPSHOT_OUTPUT_CAP,
  });
  const cannot = startFailure(res);
  if (cannot) throw new VerificationMasked('verifier_error', `test.sh could not start: ${cannot}`);
  return testOutcome(res, started, run.timeoutSec);
}

/** Whether test.sh ran past its timeout (one that itself exits 124 early did not), and what came back with it. */
function testOutcome(res: ExecResult, started: number, timeoutSec: number): { timedOut: boolean; report: TestReport } {
  const elapsedSec = (Date.now() - started) / 1000;
  return { timedOut: res.timedOut && elapsedSec >= timeoutSec - 0.5, report: parseTestReport(res) };
}

async function readCapped(path: string): Promise<string | undefined> {
  let st;
  try {
    st = await lstat(path);
  } catch {
    return undefined;
  }
  if (!st.isFile()) return st.isSymbolicLink() ? '' : undefined;
  const fh = await open(path, 'r');
  try {
    const buf = Buffer.alloc(Math.min(st.size, REWARD_FILE_CAP));
    const { bytesRead } = await fh.read(buf, 0, buf.length, 0);
    return buf.subarray(0, bytesRead).toString('utf8');
  } finally {
    await fh.close();
  }
}

async function readTail(path: string): Promise<string | undefined> {
  // Never follow a link test.sh left behind: it would point into the worker's own filesystem.
  const st = await lstat(path).catch(() => undefined);
  if (!st?.isFile()) return undefined;
  const fh = await open(path, 'r');
  try {
    const { size } = await fh.stat();
    const len = Math.min(size, STDOUT_TAIL_BYTES);
    const buf = Buffer.alloc(len);
    const { bytesRead } = await fh.read(buf, 0, len, size - len);
    return buf.subarray(0, bytesRead).toString('utf8');
  } finally {
    await fh.close();
  }
}

/**
 * /logs/verifier to `dir`. A copy that fails because test.sh removed the folder leaves `dir` empty: no reward file,
 * scored as such (a file or link left in its place comes back as that, with no reward file beside it). Any other
 * failure of the copy masks the row (provider_unavailable).
 */
async function copyVerifierLogs(provider: SandboxProvider, handle: SandboxHandle, dir: string): Promise<void> {
  const what = `copying ${VERIFIER_LOGS} out of the sandbox`;
  try {
    await provider.download(handle, VERIFIER_LOGS, dir);
  } catch (err) {
    if (err instanceof SandboxLost || (await transfer(what, () => provider.pathKind(handle, VERIFIER_LOGS))) === 'dir') throw transferFailed(what, err);
    await rm(dir, { recursive: true, force: true });
    await mkdir(dir, { recursive: true });
  }
}

/**
 * Copies /logs/verifier to <logsDir>/verifier (streaming, to disk; from the snapshot test.sh's exec sent back when
 * there is one), reads the reward files as written, redacts secrets from every other file there, and scores.
 */
export async function collectAndScore(
  provider: SandboxProvider,
  handle: SandboxHandle,
  logsDir: string,
  timedOut: boolean,
  redactValues: readonly string[],
  snapshot: Buffer | null = null,
  /** test.sh's exec saw /logs/verifier gone or replaced (TestReport.verifierLogsGone). */
  verifierLogsGone = false,
): Promise<RewardOutcome> {
  const dir = join(logsDir, 'verifier');
  await rm(dir, { recursive: true, force: true });
  const unpacked = snapshot !== null && !timedOut && await extractTar(Readable.from([snapshot]), dir).then(() => true, async () => {
    await rm(dir, { recursive: true, force: true });
    return false;
  });
  if (verifierLogsGone) await mkdir(dir, { recursive: true });
  else if (!unpacked) await copyVerifierLogs(provider, handle, dir);
  const files = new Map<string, string>();
  for (const name of REWARD_FILES) {
    const text = await readCapped(join(dir, name));
    if (text !== undefined) files.set(name, text);
  }
  await redactTree(dir, redactValues, REWARD_FILES);
  const tail = await readTail(join(dir, TEST_STDOUT));
  if (tail !== undefined) files.set(TEST_STDOUT, tail);
  return scoreVerifierOutput(verifierOutputFromFiles(files, { timedOut }));
}
