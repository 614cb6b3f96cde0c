// Artifacts: /logs/artifacts (always) and the task's `artifacts` entries, copied out of the agent's sandbox into
// <logsDir>/artifacts; in separate mode also restored at their own paths in the verifier's sandbox.
// Host layout: /logs/artifacts' contents at the folder's top, an entry at `destination` or at its source path
// without the leading slash (Harbor's layout).
import { copyFile, lstat, mkdir, mkdtemp, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, posix, relative, resolve, sep } from 'node:path';
import { SandboxLost, type SandboxHandle, type SandboxProvider } from '../sandbox/index.ts';
import type { Artifact } from '../task/index.ts';
import { transfer } from './masked.ts';
import { ARTIFACTS_LOGS } from './sandbox-scripts.ts';

export interface CopiedArtifact {
  /** Path in the agent's sandbox. */
  source: string;
  /** Absolute host path of the copy. */
  hostPath: string;
  type: 'file' | 'dir';
  /** For /logs/artifacts: the top-level names that came from it (other entries share its host folder). */
  names?: string[];
}

/** Harbor's record of what was collected, written last into the artifacts folder. */
export const MANIFEST = 'manifest.json';

export interface ManifestEntry {
  source: string;
  /** Relative to the artifacts folder ('.' for /logs/artifacts). */
  destination: string;
  type: 'file' | 'dir' | null;
  status: 'ok' | 'failed' | 'empty' | 'skipped';
  service: string;
}

function hostTarget(artifactsDir: string, a: Artifact): string {
  const rel = a.destination ?? a.source.replace(/^\/+/, '');
  const target = resolve(artifactsDir, rel);
  if (target !== artifactsDir && !target.startsWith(artifactsDir + sep)) {
    throw new Error(`artifact destination ${rel} leaves the artifacts folder; the loader should have refused it`);
  }
  return target;
}

/**
 * What each entry's source is, through the engine's archive API (as `docker compose cp` reads it): any service
 * answers whatever its image holds (no shell, no tar), running or exited.
 */
async function classify(provider: SandboxProvider, service: SandboxHandle, entries: readonly Artifact[]): Promise<Array<'dir' | 'file' | null>> {
  const kinds: Array<'dir' | 'file' | null> = [];
  for (const a of entries) kinds.push(await transfer(`looking up artifact ${a.source}`, () => provider.pathKind(service, a.source)));
  return kinds;
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** Copies what it can; a missing or uncopiable artifact only warns, a lost sandbox masks (throws). */
export async function copyArtifactsOut(
  provider: SandboxProvider,
  agent: SandboxHandle,
  artifacts: readonly Artifact[],
  artifactsDir: string,
  warnings: string[],
  /** Nothing to copy from /logs/artifacts now (test.sh's exec saw it empty, or it is copied later): recorded as empty. */
  logsArtifactsEmpty = false,
  group: {
    /** A Compose task's services by name (entries with another `service` are copied from there). */
    services?: Readonly<Record<string, SandboxHandle>>;
    /** Runs after main's entries, before the sidecars' (separate mode stops main and runs the sidecars' hooks). */
    beforeSidecars?: () => Promise<void>;
  } = {},
): Promise<CopiedArtifact[]> {
  await rm(artifactsDir, { recursive: true, force: true });
  await mkdir(artifactsDir, { recursive: true });
  const copied: CopiedArtifact[] = [];
  const attempt = async (what: string, fn: () => Promise<void>): Promise<boolean> => {
    try {
      await fn();
      return true;
    } catch (err) {
      if (err instanceof SandboxLost) throw err;
      warnings.push(`${what}: ${errorText(err)}`);
      return false;
    }
  };

  const manifest: ManifestEntry[] = [];
  const record = (a: Pick<Artifact, 'source' | 'service'>, destination: string, type: CopiedArtifact['type'] | null, status: ManifestEntry['status']) =>
    manifest.push({ source: a.source, destination: relative(artifactsDir, destination).split(sep).join('/') || '.', type, status, service: a.service });

  await transfer(`copying ${ARTIFACTS_LOGS} out of the agent's sandbox`, async () => {
    const ok = logsArtifactsEmpty || await attempt(`could not copy ${ARTIFACTS_LOGS}`, () => provider.download(agent, ARTIFACTS_LOGS, artifactsDir));
    const names = ok ? await readdir(artifactsDir) : [];
    if (ok) copied.push({ source: ARTIFACTS_LOGS, hostPath: artifactsDir, type: 'dir', names });
    record({ source: ARTIFACTS_LOGS, service: 'main' }, artifactsDir, ok ? 'dir' : null, !ok ? 'failed' : names.length === 0 ? 'empty' : 'ok');
  });

  const services = group.services ?? {};
  const entries = artifacts.filter((a) => {
    if (a.service === 'main' || services[a.service]) return true;
    warnings.push(`artifact ${a.source} names service "${a.service}", which this task's sandbox does not have; it was not copied`);
    record(a, hostTarget(artifactsDir, a), null, 'skipped');
    return false;
  });
  // All services share one tree; the first claimant of a path wins (Harbor's rule), in collection order: main's
  // entries, then the sidecars' (each service in the order the list first names it), each in list order.
  const own = entries.filter((a) => a.service === 'main');
  const sidecarNames = [...new Set(entries.map((a) => a.service).filter((n) => n !== 'main'))];
  const claims = new Map<string, Artifact>();
  const unclaimed = (list: readonly Artifact[]) => list.filter((a) => {
    const target = hostTarget(artifactsDir, a);
    const first = claims.get(target);
    if (!first) {
      claims.set(target, a);
      return true;
    }
    warnings.push(`artifact ${a.source} of service "${a.service}" lands at ${relative(artifactsDir, target)}, which ${first.source} of service "${first.service}" claimed first; it was not copied (the first claimant wins)`);
    record(a, target, null, 'skipped');
    return false;
  });
  const mine = unclaimed(own);
  if (mine.length > 0) await copyEntries(provider, agent, mine, artifactsDir, copied, record, attempt, warnings);
  await group.beforeSidecars?.();
  for (const name of sidecarNames) {
    const theirs = unclaimed(entries.filter((a) => a.service === name));
    if (theirs.length > 0) await copyEntries(provider, services[name]!, theirs, artifactsDir, copied, record, attempt, warnings);
  }
  if (copied[0]?.names?.includes(MANIFEST)) {
    warnings.push(`${ARTIFACTS_LOGS}/${MANIFEST} came from the sandbox, so Berth's artifact manifest was not written over it`);
  } else {
    await writeFile(join(artifactsDir, MANIFEST), JSON.stringify(manifest, null, 2) + '\n');
  }
  return copied;
}

async function copyEntries(
  provider: SandboxProvider,
  agent: SandboxHandle,
  entries: readonly Artifact[],
  artifactsDir: string,
  copied: CopiedArtifact[],
  record: (a: Artifact, destination: string, type: CopiedArtifact['type'] | null, status: ManifestEntry['status']) => void,
  attempt: (what: string, fn: () => Promise<void>) => Promise<boolean>,
  warnings: string[],
): Promise<void> {
  const kinds = await classify(provider, agent, entries);
  for (const [i, a] of entries.entries()) {
    const type = kinds[i];
    const target = hostTarget(artifactsDir, a);
    if (!type) {
      warnings.push(`artifact ${a.source} does not exist in the agent's sandbox; nothing was copied`);
      record(a, target, null, 'failed');
      continue;
    }
    const exclude = a.exclude.length > 0 ? { exclude: a.exclude } : undefined;
    const ok = await transfer(`copying artifact ${a.source}`, () =>
      attempt(`could not copy artifact ${a.source}`, async () => {
        if (type === 'dir') {
          await provider.download(agent, a.source, target, exclude);
        } else {
          await mkdir(dirname(target), { recursive: true });
          await provider.download(agent, a.source, dirname(target), exclude);
          const landed = join(dirname(target), posix.basename(a.source));
          if (landed !== target && existsSync(landed)) await rename(landed, target);
        }
        copied.push({ source: a.source, hostPath: target, type });
      }),
    );
    record(a, target, ok ? type : null, ok ? 'ok' : 'failed');
  }
}

/**
 * Shared mode, after test.sh: /logs/artifacts once more, since Harbor mounts it and keeps what the verifier writes
 * there too (the task's entries were copied before test.sh). `copied` and the manifest are brought up to date.
 */
export async function refreshLogsArtifacts(provider: SandboxProvider, agent: SandboxHandle, artifactsDir: string, copied: CopiedArtifact[], warnings: string[]): Promise<void> {
  try {
    await transfer(`copying ${ARTIFACTS_LOGS} out of the agent's sandbox`, () => provider.download(agent, ARTIFACTS_LOGS, artifactsDir));
  } catch (err) {
    if (err instanceof SandboxLost) throw err;
    warnings.push(`could not copy ${ARTIFACTS_LOGS} after test.sh: ${errorText(err)}`);
    return;
  }
  const others = new Set(copied.filter((c) => !c.names).map((c) => relative(artifactsDir, c.hostPath).split(sep)[0]!));
  const names = (await readdir(artifactsDir)).filter((n) => n !== MANIFEST && !others.has(n));
  const logs = copied.find((c) => c.names);
  if (logs) logs.names = names;
  else copied.unshift({ source: ARTIFACTS_LOGS, hostPath: artifactsDir, type: 'dir', names });
  const file = join(artifactsDir, MANIFEST);
  const manifest = JSON.parse(await readFile(file, 'utf8').catch(() => '[]')) as ManifestEntry[];
  const entry = Array.isArray(manifest) ? manifest.find((e) => e.source === ARTIFACTS_LOGS) : undefined;
  if (!entry) return;
  entry.type = 'dir';
  entry.status = names.length === 0 ? 'empty' : 'ok';
  await writeFile(file, JSON.stringify(manifest, null, 2) + '\n');
}

/** Separate mode: puts every copied artifact back at its own path in the verifier's sandbox. */
export async function restoreArtifacts(provider: SandboxProvider, verifier: SandboxHandle, copied: readonly CopiedArtifact[]): Promise<void> {
  for (const c of copied) {
    await transfer(`restoring artifact ${c.source} in the verifier's sandbox`, async () => {
      if (c.names) {
        for (const name of c.names) {
          const host = join(c.hostPath, name);
          const isDir = (await lstat(host)).isDirectory();
          await provider.upload(verifier, host, isDir ? posix.join(c.source, name) : c.source);
        }
      } else if (c.type === 'dir') {
        await provider.upload(verifier, c.hostPath, c.source);
      } else if (basename(c.hostPath) === posix.basename(c.source)) {
        await provider.upload(verifier, c.hostPath, posix.dirname(c.source));
      } else {
        // Copied under another name (`destination`): upload a copy carrying the source's name.
        const tmp = await mkdtemp(join(tmpdir(), 'berth-artifact-'));
        try {
          const named = join(tmp, posix.basename(c.source));
          await copyFile(c.hostPath, named);
          await provider.upload(verifier, named, posix.dirname(c.source));
        } finally {
          await rm(tmp, { recursive: true, force: true });
        }
      }
    });
  }
}

export function relativeTo(logsDir: string, copied: readonly CopiedArtifact[]): string[] {
  return copied.map((c) => relative(logsDir, c.hostPath).split(sep).join('/'));
}

/**
 * What an earlier copyArtifactsOut copied into `artifactsDir`, rebuilt from its manifest (a regrade restores them in
 * a fresh verifier). Without Berth's manifest (the sandbox shipped its own), the folder is /logs/artifacts' copy.
 */
export async function copiedFromManifest(artifactsDir: string): Promise<CopiedArtifact[]> {
  const names = await readdir(artifactsDir).catch(() => [] as string[]);
  let manifest: ManifestEntry[] | null = null;
  try {
    const parsed = JSON.parse(await readFile(join(artifactsDir, MANIFEST), 'utf8')) as unknown;
    if (Array.isArray(parsed) && parsed.every((e) => typeof e?.source === 'string' && typeof e?.destination === 'string')) manifest = parsed as ManifestEntry[];
  } catch {
    manifest = null;
  }
  if (!manifest) return names.length ? [{ source: ARTIFACTS_LOGS, hostPath: artifactsDir, type: 'dir', names }] : [];
  const ok = manifest.filter((e) => e.status === 'ok' && e.type !== null);
  const entries = ok.filter((e) => e.source !== ARTIFACTS_LOGS);
  // Other entries share the folder: their top-level names did not come from /logs/artifacts.
  const theirs = new Set(entries.map((e) => e.destination.split('/')[0]!));
  const copied: CopiedArtifact[] = [];
  if (ok.some((e) => e.source === ARTIFACTS_LOGS)) {
    copied.push({ source: ARTIFACTS_LOGS, hostPath: artifactsDir, type: 'dir', names: names.filter((n) => n !== MANIFEST && !theirs.has(n)) });
  }
  for (const e of entries) copied.push({ source: e.source, hostPath: resolve(artifactsDir, e.destination), type: e.type! });
  return copied;
}
