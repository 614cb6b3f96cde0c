// The seed, written once on the driver for every sandbox: the keep-alive's root setup (the driver starts it), then
// overlay RUN lines, uploads, the image's entrypoint, healthchecks and the seeded marker, all on exec.
import type { ExecPort, FilesPort, SandboxDriver } from './driver.ts';
import { ImageMissing, SandboxLost, SeedFailed } from './errors.ts';
import { uploadPath } from './files.ts';
import { pollHealthcheck, runOverlay, startEntrypoint } from './seed-phases.ts';
import { baseSetupScript, KEEP_ALIVE_READY, KEEP_ALIVE_TAIL, MARK_SEEDED, userCheckScript, workdirSetupScript } from './seed-scripts.ts';
import type { SandboxHandle, SandboxSpec, SeedResult } from './types.ts';

export interface Resolved {
  user: string;
  workdir: string;
}

export async function resolveUserAndWorkdir(driver: Pick<SandboxDriver, 'imageConfiguration'>, spec: SandboxSpec): Promise<Resolved> {
  if (spec.user && spec.workdir) return { user: spec.user, workdir: spec.workdir };
  const config = await driver.imageConfiguration(spec.image);
  if (!config) throw new SeedFailed('harbor:seed_failed', new ImageMissing(spec.image, new Error('no such image')).message);
  return {
    user: spec.user || config.user || 'root',
    workdir: spec.workdir || config.workdir || '/',
  };
}

/** What the keep-alive runs as root before `sleep infinity`, and what seed does once it runs (seedSandbox, seedGroup). */
export interface SeedPlan {
  resolved: Resolved;
  /** The keep-alive's setup script. */
  setup: string;
  overlay?: NonNullable<SandboxSpec['overlay']>;
  workdirStep: string[];
  laterSteps: boolean;
}

export function seedPlan(spec: SandboxSpec, resolved: Resolved): SeedPlan {
  const overlay = spec.overlay && spec.overlay.runs.length > 0 ? spec.overlay : undefined;
  const laterSteps = Boolean(spec.entrypoint?.command.length || spec.healthchecks?.length || spec.uploadDirs?.length);
  const workdirStep = [userCheckScript(resolved.user), workdirSetupScript(resolved.workdir, resolved.user)];
  // Without RUN lines every user already exists, so the whole setup runs in the keep-alive.
  const setup = [baseSetupScript(overlay ? [...new Set(overlay.runs.map((r) => r.workdir || '/'))] : [])];
  if (!overlay) setup.push(...workdirStep, ...(laterSteps ? [] : [MARK_SEEDED]));
  return { resolved, setup: setup.join('\n'), overlay, workdirStep, laterSteps };
}

/** The keep-alive's argv: the root setup, the ready line on its output, then `sleep infinity` (the driver returns once it runs). */
export function keepAliveCommand(plan: SeedPlan): string[] {
  return ['/bin/sh', '-c', `set -e\n${plan.setup}\necho '${KEEP_ALIVE_READY}'\n${KEEP_ALIVE_TAIL}`];
}

export async function seedSandbox(driver: SandboxDriver, spec: SandboxSpec): Promise<SeedResult> {
  const plan = seedPlan(spec, await resolveUserAndWorkdir(driver, spec));
  const { resolved } = plan;
  // Overlay RUN lines are build steps (Harbor builds them, with network): the sandbox's own network comes after them.
  const overlayOnline = plan.overlay !== undefined && spec.network !== 'bridge';
  const made = await driver.createOrAdoptSandbox({
    name: spec.name, labels: spec.labels, image: spec.image, keepAlive: keepAliveCommand(plan), env: spec.env,
    user: resolved.user, workdir: resolved.workdir, network: overlayOnline ? 'bridge' : spec.network,
    ...(spec.cpus !== undefined ? { cpus: spec.cpus } : {}),
    ...(spec.memoryMb !== undefined ? { memoryMb: spec.memoryMb } : {}),
    ...(spec.gpus !== undefined ? { gpus: spec.gpus } : {}),
    ...(spec.networkPhases || overlayOnline ? { networkPhases: true } : {}),
    ...(spec.readyOnFirstExec ? { readyOnFirstExec: true } : {}),
  });
  if (made.adopted) return made;
  await finishSeed(driver, made.handle, spec, plan, overlayOnline ? () => driver.putOnNetwork(made.handle, spec.network) : undefined);
  return { handle: made.handle, adopted: false };
}

/** Once the keep-alive's setup is done: overlay RUN lines, uploads, entrypoint, healthchecks, the seeded marker. */
export async function finishSeed(
  driver: FilesPort, handle: SandboxHandle, spec: SandboxSpec, plan: SeedPlan,
  /** Run once the RUN lines are done (the sandbox's own network replacing the build's). */
  afterOverlay?: () => Promise<void>,
): Promise<void> {
  const { overlay, workdirStep, laterSteps, resolved } = plan;
  if (overlay) {
    await runOverlay(driver, handle, overlay.runs, overlay.timeoutSec);
    await afterOverlay?.();
    // The agent user may have been created by a RUN line, so the working directory comes after.
    await setupExec(driver, handle, [...workdirStep, ...(laterSteps ? [] : [MARK_SEEDED])].join('\n'));
  }
  for (const u of spec.uploadDirs ?? []) {
    await uploadPath(driver, handle, u.hostDir, u.containerDir ?? resolved.workdir, { owner: resolved.user });
  }
  if (spec.entrypoint && spec.entrypoint.command.length > 0) await startEntrypoint(driver, handle, spec.entrypoint);
  for (const hc of spec.healthchecks ?? []) await pollHealthcheck(driver, handle, hc, Boolean(spec.entrypoint?.command.length));
  if (laterSteps) await setupExec(driver, handle, MARK_SEEDED);
}

async function setupExec(driver: ExecPort, handle: SandboxHandle, script: string): Promise<void> {
  const res = await driver.exec(handle, {
    argv: ['/bin/sh', '-c', `set -e\n${script}`],
    user: 'root',
    workdir: '/',
    outputCapBytes: 64 * 1024,
  });
  if (res.exitCode !== 0) {
    if (res.exitCode === 137) throw new SandboxLost(handle.name, new Error('setup was killed'));
    throw new SeedFailed(
      'harbor:seed_failed',
      `preparing sandbox ${handle.name} failed (exit ${res.exitCode}): ${(res.stderr || res.stdout).trim()}`,
      res.stderr,
    );
  }
}
