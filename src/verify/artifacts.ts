// Artifacts: /logs/artifacts (always) and the task's `artifacts` entries, copied out of the agent's sandbox into
// <logsDir>/artifacts; in separate mode also restored at their own paths in the verifier's sandbox.
// Host layout: /logs/artifacts' contents at the folder's top, an entry at `destination` or at its source path
// without the leading slash (Harbor's layout).
import { copyFile, lstat, mkdir, mkdtemp, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, join, posix, relative, resolve, sep } from 'node:path';
import { isLossError, shellQuote, type SandboxHandle, type SandboxProvider } from '../sandbox/index.ts';
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

const STAGING = '/tmp/.berth-artifacts';
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
const MARK = 'berth-artifact:';

function hostTarget(artifactsDir: string, a: Artifact): string {
  const rel = a.destination ?? a.source.replace(/^\/+/, '');
  const target = resolve(artifactsDir, rel);
  if (target !== artifactsDir && !target.startsWith(artifactsDir + sep)) {
    throw new Error(`artifact destination ${rel} leaves the artifacts folder; the loader should have refused it`);
  }
  return target;
}

/** One exec: which sources exist and as what; sources with `exclude` are staged through tar so they can be left out. */
function classifyScript(entries: readonly Artifact[]): string {
  const lines = [`rm -rf ${STAGING}`];
  entries.forEach((a, i) => {
    const p = shellQuote(a.source);
    lines.push(`if [ -d ${p} ]; then t=d; elif [ -e ${p} ]; then t=f; else t=-; fi; echo "${MARK}${i}:$t"`);
    if (a.exclude.length > 0) {
      const stage = `${STAGING}/${i}`;
      const excludes = a.exclude.map((e) => `--exclude=${shellQuote(e)}`).join(' ');
      lines.push(
        `if [ "$t" != - ]; then mkdir -p ${stage} && tar -C ${shellQuote(posix.dirname(a.source))} -cf - ${excludes} -- ${shellQuote(posix.basename(a.source))} | tar -C ${stage} -xf - || echo "${MARK}${i}:stage-failed"; fi`,
      );
    }
  });
  return lines.join('\n');
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
  /** test.sh's exec saw /logs/artifacts empty: nothing to copy from it. */
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
      if (isLossError(err)) throw err;
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
  const own = entries.filter((a) => a.service === 'main');
  if (own.length > 0) await copyEntries(provider, agent, own, artifactsDir, copied, record, attempt, warnings);
  await group.beforeSidecars?.();
  // All services share one tree; the first claimant of a path wins (Harbor's rule).
  for (const [name, handle] of Object.entries(services)) {
    const theirs = entries.filter((a) => a.service === name && name !== 'main');
    if (theirs.length > 0) await copyEntries(provider, handle, theirs, artifactsDir, copied, record, attempt, warnings);
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
  const res = await transfer('looking up the artifacts in the agent sandbox', () =>
    provider.exec(agent, { command: classifyScript(entries), user: 'root', workdir: '/', outputCapBytes: 64 * 1024 }),
  );
  const status = new Map<number, string>();
  for (const line of res.stdout.split('\n')) {
    if (!line.startsWith(MARK)) continue;
    const [i, t] = line.slice(MARK.length).trim().split(':');
    if (t === 'stage-failed' || !status.has(Number(i))) status.set(Number(i), t!);
  }

  for (const [i, a] of entries.entries()) {
    const t = status.get(i);
    const target = hostTarget(artifactsDir, a);
    if (t === undefined || t === '-') {
      warnings.push(`artifact ${a.source} does not exist in the agent's sandbox; nothing was copied`);
      record(a, target, null, 'failed');
      continue;
    }
    if (t === 'stage-failed') {
      warnings.push(`artifact ${a.source} could not be packed with its exclude patterns (tar failed); nothing was copied`);
      record(a, target, null, 'failed');
      continue;
    }
    const from = a.exclude.length > 0 ? `${STAGING}/${i}/${posix.basename(a.source)}` : a.source;
    const type = t === 'd' ? 'dir' : 'file';
    const ok = await transfer(`copying artifact ${a.source}`, () =>
      attempt(`could not copy artifact ${a.source}`, async () => {
        if (type === 'dir') {
          await provider.download(agent, from, target);
        } else {
          await mkdir(dirname(target), { recursive: true });
          await provider.download(agent, from, dirname(target));
          const landed = join(dirname(target), posix.basename(from));
          if (landed !== target) await rename(landed, target);
        }
        copied.push({ source: a.source, hostPath: target, type });
      }),
    );
    record(a, target, ok ? type : null, ok ? 'ok' : 'failed');
  }
  if (entries.some((a) => a.exclude.length > 0)) {
    await provider.exec(agent, { command: `rm -rf ${STAGING}`, user: 'root', workdir: '/' }).catch((err: unknown) => {
      if (isLossError(err)) throw err;
    });
  }
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
