// The seed of a Compose task: the group made by the driver, then main seeded exactly as a single
// sandbox is (the same keep-alive setup, overlay RUN lines, entrypoint, healthcheck and seeded
// marker, all on exec). A retried seed adopts a group whose main finished its seed.
import { DETACHED_BASE } from './detached.ts';
import { mainLaunchOverride, type ComposeModel } from './compose/model.ts';
import type { GroupHandle, GroupMainSpec, GroupSpec, SandboxDriver } from './driver.ts';
import { ENTRYPOINT_KEY } from './seed-phases.ts';
import { finishSeed, keepAliveCommand, resolveUserAndWorkdir, seedPlan, type SeedPlan } from './seed.ts';
import type { SandboxHandle, SandboxSpec } from './types.ts';

export interface GroupSeedOptions {
  project: string;
  composeFile: string;
  projectDir: string;
  interpolationEnv: NodeJS.ProcessEnv;
  prepareImages: GroupSpec['prepareImages'];
  waitTimeoutSec: number;
  /** The group's network in a task whose network switches by phase (network-phase.ts); default: one for the episode. */
  phases?: { attachFirst: readonly string[]; sidecarEnv: Readonly<Record<string, string>> };
}

export interface GroupSeedResult {
  group: GroupHandle;
  main: SandboxHandle;
  adopted: boolean;
  /** Whether Berth started an entrypoint beside main's keep-alive (its death masks the rollout). */
  entrypoint: boolean;
}

/**
 * The process Berth starts beside main's keep-alive: the image's entrypoint, with the task file's
 * `entrypoint` or `command` for main in place of the image's where it sets them (Compose's rule).
 */
export function mainEntrypoint(
  spec: SandboxSpec,
  override: ReturnType<typeof mainLaunchOverride>,
  imageEntrypoint: readonly string[] | null,
): SandboxSpec['entrypoint'] {
  if (override.entrypoint === null && override.command === null) return spec.entrypoint;
  const entry = override.entrypoint ?? imageEntrypoint ?? [];
  const command = override.command ?? (override.entrypoint !== null ? [] : spec.entrypoint?.command.slice(entry.length) ?? []);
  const argv = [...entry, ...command];
  return argv.length > 0 ? { command: argv, env: spec.entrypoint?.env ?? {} } : undefined;
}

/** `spec` is main's, as for a single sandbox (its name is unused: Compose names the containers). */
export async function seedGroup(driver: SandboxDriver, spec: SandboxSpec, o: GroupSeedOptions): Promise<GroupSeedResult> {
  const resolvedUser = await resolveUserAndWorkdir(driver, spec);
  const image = await driver.imageConfiguration(spec.image);
  const mainSettings = (s: SandboxSpec, plan: SeedPlan): GroupMainSpec => ({
    image: s.image, keepAlive: keepAliveCommand(plan), env: s.env, user: plan.resolved.user, workdir: plan.resolved.workdir,
    ...(s.cpus !== undefined ? { cpus: s.cpus } : {}), ...(s.memoryMb !== undefined ? { memoryMb: s.memoryMb } : {}),
    imageHasHealthcheck: Boolean(image?.healthcheck),
  });
  // Settled once Compose has read the file: main's own entrypoint or command there changes what Berth starts.
  let mainSpec = spec;
  let plan = seedPlan(spec, resolvedUser);
  const result = await driver.createOrAdoptGroup({
    project: o.project,
    labels: spec.labels,
    composeFile: o.composeFile,
    projectDir: o.projectDir,
    interpolationEnv: o.interpolationEnv,
    main: mainSettings(spec, plan),
    mainFor: (resolved) => {
      const entrypoint = mainEntrypoint(spec, mainLaunchOverride(resolved as ComposeModel), image?.entrypoint ?? null);
      mainSpec = { ...spec, entrypoint };
      if (!entrypoint) delete mainSpec.entrypoint;
      plan = seedPlan(mainSpec, resolvedUser);
      return mainSettings(mainSpec, plan);
    },
    prepareImages: o.prepareImages,
    // A task that switches keeps its group networks internal: the way out is joined and left per phase.
    internal: spec.network === 'none' || o.phases !== undefined,
    ...(o.phases ? { attachFirst: o.phases.attachFirst, sidecarEnv: o.phases.sidecarEnv } : {}),
    waitTimeoutSec: o.waitTimeoutSec,
    afterMain: (main) => finishSeed(driver, main, mainSpec, plan),
  });
  const main = result.group.services.main!;
  if (result.adopted) {
    const entrypoint = await driver.exec(main, { argv: ['test', '-d', `${DETACHED_BASE}/${ENTRYPOINT_KEY}`], user: 'root', workdir: '/' });
    return { group: result.group, main, adopted: true, entrypoint: entrypoint.exitCode === 0 };
  }
  return { group: result.group, main, adopted: false, entrypoint: Boolean(mainSpec.entrypoint?.command.length) };
}
