// The derived image an installed agent runs from: the task's image plus the agent at its pinned version, built
// once per host per (task image id, agent, version) under a content-addressed tag, and labelled so `berth
// agents`, `berth prepare` and the janitor know it. Every episode after the first starts from it.
import { createHash } from 'node:crypto';
import { chmod, copyFile, link, mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { SandboxProvider } from '../../sandbox/index.ts';
import { AgentInstallFailed } from './errors.ts';
import { fetchNpm, fetchWheels, NODE_PACKAGE, PIP_VERSION, type PythonTarget } from './packages.ts';
import { BUNDLED_PYTHONS, ensureBundledPython, hostMachine } from './bundled-python.ts';
import { agentDir, type InstallRecipe, type InstalledAgent } from './types.ts';

/** Bumped when the way layers are built changes, so old layers are not reused. */
const LAYER_FORMAT = 2;

export const LAYER_LABEL = 'berth.agent-layer';
export const LAYER_AGENT_LABEL = 'berth.agent';
export const LAYER_VERSION_LABEL = 'berth.agent.version';
export const LAYER_BASE_LABEL = 'berth.agent.base';

export function layerTag(baseImageId: string, agent: InstalledAgent): string {
  const hash = createHash('sha256')
    .update(JSON.stringify([LAYER_FORMAT, baseImageId, agent.name, agent.version, agent.install, agent.versionCommand]))
    .digest('hex').slice(0, 20);
  return `berth-agent-${agent.name}:${hash}`;
}

export const imageId = (provider: SandboxProvider, ref: string): Promise<string> => provider.images.id(ref);

const PY_PROBE = "import sys, platform; l = platform.libc_ver(); print(sys.version_info[0], sys.version_info[1], platform.machine(), l[0], l[1])";

/** Runs the image's python3 once (no sandbox: a throwaway container) to learn which wheels it takes. */
export async function probePython(provider: SandboxProvider, image: string): Promise<PythonTarget | null> {
  const r = await provider.images.runOnce(image, ['python3', '-c', PY_PROBE], { user: '0', labels: { [LAYER_LABEL]: 'probe' } });
  if (r.exitCode !== 0) return null;
  const m = /(\d+) (\d+) (\S+) (\S*) 2\.(\d+)/.exec(r.stdout);
  if (!m) return null;
  return { major: Number(m[1]), minor: Number(m[2]), machine: m[3]!, glibcMinor: Number(m[5]) };
}

async function linkOrCopy(from: string, to: string): Promise<void> {
  await link(from, to).catch(() => copyFile(from, to));
}

/** A folder's files into the build context, hard-linked where the file system allows (modes kept). */
async function linkTree(from: string, to: string): Promise<void> {
  await mkdir(to, { recursive: true });
  for (const e of await readdir(from, { withFileTypes: true })) {
    if (e.isDirectory()) await linkTree(join(from, e.name), join(to, e.name));
    else if (e.isFile()) await linkOrCopy(join(from, e.name), join(to, e.name));
  }
}

/** Node.js 22's official build needs glibc 2.28 or newer and libstdc++. */
const GLIBC_MIN_MINOR = 28;
const GLIBC_PROBE = 'getconf GNU_LIBC_VERSION 2>/dev/null; for d in /lib /usr/lib /lib64 /usr/lib64 /lib/*-linux-gnu /usr/lib/*-linux-gnu; do ' +
  '[ -e "$d/libstdc++.so.6" ] && echo libstdc++ && break; done; true';

/** What an image offers a glibc-linked binary: glibc's minor version (null: none, e.g. musl) and whether libstdc++ is there. */
export async function probeGlibc(provider: SandboxProvider, image: string): Promise<{ glibcMinor: number | null; libstdcxx: boolean }> {
  const r = await provider.images.runOnce(image, ['sh', '-c', GLIBC_PROBE], { user: '0', labels: { [LAYER_LABEL]: 'probe' } });
  const m = /glibc 2\.(\d+)/.exec(r.stdout);
  return { glibcMinor: m ? Number(m[1]) : null, libstdcxx: /libstdc\+\+/.test(r.stdout) };
}

/** The runtime check a glibc-linked agent needs, made before anything is fetched: a clear refusal instead of a failed build. */
async function requireGlibc(provider: SandboxProvider, agent: InstalledAgent, baseId: string, libstdcxx: boolean, minMinor = GLIBC_MIN_MINOR): Promise<void> {
  const got = await probeGlibc(provider, baseId);
  const missing = got.glibcMinor === null ? 'no glibc (a musl or distroless image?)'
    : got.glibcMinor < minMinor ? `glibc 2.${got.glibcMinor}`
      : libstdcxx && !got.libstdcxx ? 'no libstdc++.so.6' : null;
  if (missing) {
    throw new AgentInstallFailed(
      `${agent.name} ${agent.version} needs glibc >= 2.${minMinor}${libstdcxx ? ' and libstdc++6' : ''} in the task's image, which has ${missing}: ` +
        `${libstdcxx ? 'add them to the task\'s image (Debian/Ubuntu: libstdc++6)' : `use a task image with glibc 2.${minMinor} or newer (e.g. Debian 12, Ubuntu 24.04)`} or pick another agent`,
    );
  }
}

/** The Python a PyPI agent's wheels are for: the one the layer brings (built on the host, its glibc checked), else the image's. */
async function pythonFor(
  provider: SandboxProvider, agent: InstalledAgent, install: Extract<InstallRecipe, { kind: 'pypi' }>, baseId: string, ctx: string, toolsDir: string,
): Promise<{ py: PythonTarget; bin: string }> {
  if (install.python) {
    const python = BUNDLED_PYTHONS[install.python];
    // Before the build (once per host, minutes): an image it cannot run on is refused at once.
    await requireGlibc(provider, agent, baseId, false, python.glibcMinor);
    const built = await ensureBundledPython(python, toolsDir);
    await linkTree(join(built.dir, 'prefix'), join(ctx, 'python'));
    return { py: { major: python.major, minor: python.minor, machine: hostMachine(), glibcMinor: python.glibcMinor }, bin: python.bin };
  }
  const py = await probePython(provider, baseId);
  const [wantMajor, wantMinor] = install.minPython;
  if (!py || py.major < wantMajor || (py.major === wantMajor && py.minor < wantMinor)) {
    throw new AgentInstallFailed(
      `${agent.name} ${agent.version} needs Python >= ${wantMajor}.${wantMinor} in the task's image, which has ` +
        `${py ? `Python ${py.major}.${py.minor}` : 'no working python3 (or not glibc)'}: add python3 to the task's image or pick another agent`,
    );
  }
  return { py, bin: 'python3' };
}

function labels(agent: InstalledAgent, baseId: string): string {
  return [
    `LABEL ${LAYER_LABEL}="1"`,
    `LABEL ${LAYER_AGENT_LABEL}="${agent.name}" ${LAYER_VERSION_LABEL}="${agent.version}" ${LAYER_BASE_LABEL}="${baseId}"`,
  ].join('\n');
}

/**
 * The build context: the agent's files and a Dockerfile over the base image (its USER restored at the end).
 * `cacheDir` holds fetched packages, `toolsDir` what Berth builds on the host (a bundled Python).
 */
export async function layerContext(provider: SandboxProvider, agent: InstalledAgent, baseId: string, cacheDir: string, toolsDir = join(cacheDir, 'tools')): Promise<string> {
  const user = (await provider.images.config(baseId))?.user ?? '';
  // BuildKit takes FROM a tag, not an image id: a tag naming exactly that id.
  // The digest's hex part: an id (`sha256:…`) on Docker, a digest reference (`registry/repo@sha256:…`) on a registry's engine.
  const baseTag = { repo: 'berth-agent-base', tag: baseId.replace(/^.*sha256:/, '').slice(0, 20) };
  const ctx = await mkdtemp(join(cacheDir, 'layer-ctx-'));
  const lines = [`FROM ${baseTag.repo}:${baseTag.tag}`, 'USER root'];
  const dir = agentDir(agent.name);
  const check = `RUN out="$(${agent.versionCommand} 2>&1)" && echo "$out" && case "$out" in *${agent.version}*) ;; *) echo "expected version ${agent.version}" >&2; exit 1;; esac`;
  const install = agent.install;
  try {
    if (install.kind === 'npm-binary') {
      if (install.glibc) await requireGlibc(provider, agent, baseId, false);
      const pkg = await fetchNpm(install, cacheDir);
      await mkdir(join(ctx, 'bin'));
      const bin = install.file.split('/').pop()!;
      await linkOrCopy(join(pkg, 'package', install.file), join(ctx, 'bin', bin));
      // COPY keeps the context's mode: a RUN chmod would store the binary a second time.
      await chmod(join(ctx, 'bin', bin), 0o755);
      lines.push(`COPY bin/ ${dir}/bin/`);
    } else if (install.kind === 'npm-node') {
      await requireGlibc(provider, agent, baseId, true);
      const node = await fetchNpm({ package: NODE_PACKAGE, version: install.node }, cacheDir);
      const pkg = await fetchNpm(install, cacheDir);
      await mkdir(join(ctx, 'node', 'bin'), { recursive: true });
      await linkOrCopy(join(node, 'package', 'bin', 'node'), join(ctx, 'node', 'bin', 'node'));
      await linkTree(join(pkg, 'package'), join(ctx, 'pkg'));
      await mkdir(join(ctx, 'bin'));
      await writeFile(join(ctx, 'bin', agent.name), `#!/bin/sh\nexec ${dir}/node/bin/node ${dir}/pkg/${install.entry} "$@"\n`, { mode: 0o755 });
      lines.push(`COPY node/ ${dir}/node/`, `COPY pkg/ ${dir}/pkg/`, `COPY bin/ ${dir}/bin/`);
    } else {
      const { py, bin } = await pythonFor(provider, agent, install, baseId, ctx, toolsDir);
      if (install.python) lines.push(`COPY python/ ${BUNDLED_PYTHONS[install.python].prefix}/`);
      const wheels = await fetchWheels(install, cacheDir, py);
      await mkdir(join(ctx, 'wheels'));
      for (const f of await readdir(wheels)) await linkOrCopy(join(wheels, f), join(ctx, 'wheels', f));
      lines.push(
        `RUN --mount=type=bind,source=wheels,target=/tmp/berth-wheels ${bin} /tmp/berth-wheels/pip-${PIP_VERSION}-py3-none-any.whl/pip install ` +
          `--quiet --no-index --no-cache-dir --disable-pip-version-check --root-user-action=ignore --find-links /tmp/berth-wheels ` +
          `${install.ignoreRequiresPython ? '--ignore-requires-python ' : ''}--target ${dir}/lib ${install.package}==${install.version}`,
      );
    }
  } catch (err) {
    await rm(ctx, { recursive: true, force: true });
    throw err;
  }
  lines.push(check, labels(agent, baseId));
  if (user) lines.push(`USER ${user}`);
  await writeFile(join(ctx, 'Dockerfile'), `${lines.join('\n')}\n`);
  // Tagged once the image's runtime checks passed, so an image refused leaves no tag behind.
  await provider.images.tag(baseId, baseTag.repo, baseTag.tag);
  return ctx;
}

export interface LayerResult {
  tag: string;
  built: boolean;
  seconds: number;
}

/** Builds the layer unless this host has it; one build per tag (the build lock), so concurrent episodes share it. */
export async function ensureLayer(provider: SandboxProvider, agent: InstalledAgent, baseImage: string, cacheDir: string, toolsDir?: string): Promise<LayerResult> {
  const started = Date.now();
  const baseId = await provider.images.id(baseImage);
  const tag = layerTag(baseId, agent);
  if (await layerExists(provider, tag)) return { tag, built: false, seconds: 0 };
  await mkdir(cacheDir, { recursive: true });
  const ctx = await layerContext(provider, agent, baseId, cacheDir, toolsDir);
  try {
    const r = await provider.images.build({ contextDir: ctx, tag });
    return { tag, built: r.built, seconds: Math.round((Date.now() - started) / 100) / 10 };
  } finally {
    await rm(ctx, { recursive: true, force: true });
  }
}

/** Whether this host's engine has the layer. */
export const layerExists = async (provider: SandboxProvider, tag: string): Promise<boolean> => (await provider.images.config(tag)) !== null;

export interface LayerInfo {
  tag: string;
  agent: string;
  version: string;
  base: string;
  sizeMb: number;
  created: string;
}

/** The agent layers this host's engine holds. */
export async function listLayers(provider: SandboxProvider): Promise<LayerInfo[]> {
  const images = await provider.images.labelled(`${LAYER_LABEL}=1`);
  return images.flatMap((i) => i.tags.map((tag) => ({
    tag,
    agent: i.labels[LAYER_AGENT_LABEL] ?? '?',
    version: i.labels[LAYER_VERSION_LABEL] ?? '?',
    base: i.labels[LAYER_BASE_LABEL] ?? '?',
    sizeMb: Math.round(i.sizeBytes / 1e6),
    created: i.created,
  })));
}
