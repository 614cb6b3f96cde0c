import { setTimeout as sleep } from 'node:timers/promises';
import { startDetached, pollDetached } from './detached.ts';
import { SandboxNeverReady, SeedFailed } from './errors.ts';
import type { ExecPort } from './driver.ts';
import { shellQuote } from './names.ts';
import type { ExecResult, HealthcheckSpec, OverlayRun, SandboxHandle } from './types.ts';
import { SANDBOX_LAYOUT } from '../task/layout.ts';

const FAILURE_OUTPUT_CHARS = 4000;

function outputTail(res: ExecResult): string {
  const text = [res.stdout, res.stderr].filter((s) => s.trim().length > 0).join('\n');
  return text.length > FAILURE_OUTPUT_CHARS ? `…${text.slice(-FAILURE_OUTPUT_CHARS)}` : text;
}

/**
 * `/bin/sh -c <command>` (Docker's shell for RUN), first dropping the container's variables that are not set at
 * the line, so the line sees exactly the environment a build would (the exec's Env sets the rest).
 */
export function overlayArgv(run: OverlayRun): string[] {
  const unset = (run.unset ?? []).filter((k) => /^[A-Za-z_][A-Za-z0-9_]*$/.test(k));
  if (unset.length === 0) return ['/bin/sh', '-c', run.command];
  return ['/bin/sh', '-c', `unset ${unset.join(' ')}; exec /bin/sh -c "$1"`, 'sh', run.command];
}

/** Dockerfile RUN lines in order, with the shell Docker uses for them (`/bin/sh -c`). */
export async function runOverlay(
  driver: ExecPort,
  handle: SandboxHandle,
  runs: OverlayRun[],
  timeoutSec: number,
): Promise<void> {
  const deadline = Date.now() + timeoutSec * 1000;
  for (const [i, run] of runs.entries()) {
    const remaining = Math.ceil((deadline - Date.now()) / 1000);
    const label = `RUN line ${i + 1} of ${runs.length} (${run.command.slice(0, 200)})`;
    if (remaining <= 0) {
      throw new SeedFailed('harbor:overlay_failed', `${label} did not start: build_timeout_sec (${timeoutSec} s) spent`);
    }
    const res = await driver.exec(handle, {
      argv: overlayArgv(run),
      user: run.user || 'root',
      workdir: run.workdir || '/',
      env: run.env,
      timeoutSec: remaining,
      outputCapBytes: 256 * 1024,
    });
    if (res.timedOut) {
      const out = outputTail(res);
      throw new SeedFailed(
        'harbor:overlay_failed',
        `${label} timed out: the overlay's RUN lines share build_timeout_sec = ${timeoutSec} s\n${out}`,
        out,
      );
    }
    if (res.exitCode !== 0) {
      const out = outputTail(res);
      throw new SeedFailed('harbor:overlay_failed', `${label} failed with exit code ${res.exitCode}:\n${out}`, out);
    }
  }
}

export const ENTRYPOINT_KEY = 'entrypoint';
export const ENTRYPOINT_OUTPUT = `${SANDBOX_LAYOUT.agentLogs}/entrypoint-stdout.txt`;
/** How long seed watches a freshly started entrypoint for an early non-zero exit. */
const ENTRYPOINT_SETTLE_MS = 300;

export async function startEntrypoint(
  driver: ExecPort,
  handle: SandboxHandle,
  entrypoint: { command: string[]; env: Record<string, string> },
): Promise<void> {
  await startDetached(driver, handle, {
    key: ENTRYPOINT_KEY,
    command: `exec ${entrypoint.command.map(shellQuote).join(' ')}`,
    env: entrypoint.env,
    outputPath: ENTRYPOINT_OUTPUT,
  });
  await sleep(ENTRYPOINT_SETTLE_MS);
  await assertEntrypointAlive(driver, handle);
}

export type EntrypointState =
  | { state: 'none' }
  | { state: 'running' }
  | { state: 'exited'; exitCode: number }
  | { state: 'lost' };

/** Where the image's entrypoint stands; an activity masks a rollout whose entrypoint died. */
export async function entrypointState(driver: ExecPort, handle: SandboxHandle): Promise<EntrypointState> {
  const s = await pollDetached(driver, handle, ENTRYPOINT_KEY);
  if (s.state === 'missing') return { state: 'none' };
  if (s.state === 'exit') return { state: 'exited', exitCode: s.exitCode };
  if (s.state === 'dead') return { state: 'lost' };
  return { state: 'running' };
}

/** Throws entrypoint_failed when the entrypoint exited non-zero; exiting 0 (a setup script) is fine. */
export async function assertEntrypointAlive(driver: ExecPort, handle: SandboxHandle): Promise<void> {
  const s = await pollDetached(driver, handle, ENTRYPOINT_KEY);
  if (s.state === 'exit' && s.exitCode !== 0) {
    const tail = await driver.exec(handle, {
      argv: ['tail', '-c', '4000', ENTRYPOINT_OUTPUT],
      user: 'root',
      workdir: '/',
    });
    throw new SeedFailed(
      'harbor:entrypoint_failed',
      `the image's entrypoint exited with code ${s.exitCode} at seed; its output (${ENTRYPOINT_OUTPUT}):\n${tail.stdout}`,
      tail.stdout,
    );
  }
  if (s.state === 'dead') {
    throw new SeedFailed('harbor:entrypoint_failed', `the image's entrypoint died without an exit code at seed`);
  }
}

/**
 * Spec semantics: failures inside start_period_sec do not count (attempts start_interval_sec apart);
 * after it, `retries` consecutive failures interval_sec apart fail the seed. The first attempt is immediate.
 */
export async function pollHealthcheck(
  driver: ExecPort,
  handle: SandboxHandle,
  hc: HealthcheckSpec,
  watchEntrypoint: boolean,
  /** Who runs the command (a step's healthcheck runs as the step's agent user); unset, the container's default. */
  user?: string,
): Promise<void> {
  const started = Date.now();
  let failures = 0;
  let last: ExecResult | undefined;
  for (;;) {
    const inStartPeriod = Date.now() - started < hc.startPeriodSec * 1000;
    last = await driver.exec(handle, {
      argv: ['/bin/sh', '-c', hc.command],
      ...(user !== undefined ? { user } : {}),
      timeoutSec: hc.timeoutSec,
      outputCapBytes: 64 * 1024,
    });
    if (last.exitCode === 0 && !last.timedOut) return;
    if (watchEntrypoint) await assertEntrypointAlive(driver, handle);
    if (!inStartPeriod) {
      failures++;
      if (failures >= hc.retries) {
        const why = last.timedOut ? `timed out after ${hc.timeoutSec} s` : `exit code ${last.exitCode}`;
        const out = outputTail(last);
        // A fresh seed may come up healthy (Task Folder Format § Environment: healthcheck).
        throw new SandboxNeverReady(
          `healthcheck \`${hc.command}\` failed ${failures} times in a row (last: ${why}); the sandbox never became healthy\n${out}`,
          out,
        );
      }
    }
    await sleep((inStartPeriod ? hc.startIntervalSec : hc.intervalSec) * 1000);
  }
}
