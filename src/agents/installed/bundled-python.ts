// A Python the layer brings when the agent needs one newer than task images have (openhands: 3.12 or 3.13;
// Debian bookworm has 3.11). PyPI serves no relocatable CPython and this machine reaches no python.org, so
// scripts/build-cpython.sh builds Debian's python3.13 source once per host inside a berth-base:bookworm
// container, for a fixed prefix, into BERTH_HOME/tools/cpython-<version>/ (its libraries beside it). The layer
// copies it to that prefix; the task's image needs glibc as new as the build's, checked at prepare.
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { AgentInstallFailed } from './errors.ts';
import type { BundledPythonName } from './types.ts';

export interface BundledPython {
  /** As scripts/build-cpython.sh pins it. */
  version: string;
  major: number;
  minor: number;
  /** Where it runs from in every layer (its RPATH names it). */
  prefix: string;
  /** The interpreter inside the layer. */
  bin: string;
  /** glibc's minor version (2.x) of the image it is built in, berth-base:bookworm: the task's image needs at least this. */
  glibcMinor: number;
}

export const BUNDLED_PYTHONS: Readonly<Record<BundledPythonName, BundledPython>> = {
  'cpython-3.13': { version: '3.13.15', major: 3, minor: 13, prefix: '/opt/berth/python3.13', bin: '/opt/berth/python3.13/bin/python3.13', glibcMinor: 36 },
};

const SCRIPT = join(import.meta.dirname, '..', '..', '..', 'scripts', 'build-cpython.sh');
/** A build on a loaded 2-core machine takes minutes; this bounds a hung one. */
const BUILD_TIMEOUT_MS = 90 * 60_000;

export interface BuiltPython {
  /** The host folder whose prefix/ is the install. */
  dir: string;
  /** glibc's minor version the build linked against (2.x): the image needs at least this. */
  glibcMinor: number;
}

/** The host's build of this Python under `toolsDir` (BERTH_HOME/tools), made once (the script is idempotent and locks). */
export async function ensureBundledPython(python: BundledPython, toolsDir: string): Promise<BuiltPython> {
  const dir = join(toolsDir, `cpython-${python.version}`);
  try {
    await promisify(execFile)('bash', [SCRIPT, dir], { timeout: BUILD_TIMEOUT_MS, maxBuffer: 64 << 20 });
  } catch (err) {
    const e = err as { stderr?: string; message?: string };
    const tail = (e.stderr || e.message || String(err)).trim().split('\n').slice(-8).join('\n');
    throw new AgentInstallFailed(`building CPython ${python.version} on the host (scripts/build-cpython.sh ${dir}) failed:\n${tail}`);
  }
  const glibc = /^2\.(\d+)/.exec((await readFile(join(dir, 'glibc'), 'utf8')).trim());
  if (!glibc || Number(glibc[1]) > python.glibcMinor) {
    throw new AgentInstallFailed(`${join(dir, 'glibc')} names glibc ${glibc?.[0] ?? '(none)'}, not the 2.${python.glibcMinor} this Python is checked against: remove ${dir} and prepare again`);
  }
  return { dir, glibcMinor: Number(glibc[1]) };
}

/** The host's machine name as Python's platform tags spell it (the build is for the host's architecture). */
export function hostMachine(): string {
  return process.arch === 'x64' ? 'x86_64' : process.arch === 'arm64' ? 'aarch64' : process.arch;
}
