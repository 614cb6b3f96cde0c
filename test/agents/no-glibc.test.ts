// An agent whose layer needs glibc, on an image without it (a busybox rootfs: a static binary and its applets, as a
// musl or distroless image offers), is refused at install before anything is fetched, naming what the image lacks;
// no tag is left behind (issue 26: install failures are clear and cheap).
import Docker from 'dockerode';
import { mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { AgentInstallFailed, INSTALLED_AGENTS, ensureLayer, imageId } from '../../src/agents/index.ts';
import { DockerSandboxProvider } from '../../src/sandbox/index.ts';
import { BUSYBOX_IMAGE, ensureShelllessImages } from '../compose/shellless-images.ts';

const docker = new Docker();
const provider = new DockerSandboxProvider(docker);

const baseTagOf = async () => `berth-agent-base:${(await imageId(provider, BUSYBOX_IMAGE)).replace(/^sha256:/, '').slice(0, 20)}`;

beforeAll(async () => {
  await ensureShelllessImages();
  // A tag an earlier run left (before layerContext tagged only after its checks) would hide what this pins.
  await docker.getImage(await baseTagOf()).remove().catch(() => undefined);
}, 120_000);

describe('an agent needing glibc on an image without it', () => {
  it.each([
    { agent: 'opencode' as const, needs: /^opencode \S+ needs glibc >= 2\.28 in the task's image, which has no glibc \(a musl or distroless image\?\): use a task image with glibc 2\.28 or newer/ },
    { agent: 'cline' as const, needs: /^cline \S+ needs glibc >= 2\.28 in the task's image, which has no glibc/ },
    { agent: 'gemini-cli' as const, needs: /^gemini-cli \S+ needs glibc >= 2\.28 and libstdc\+\+6 in the task's image, which has no glibc/ },
    { agent: 'aider' as const, needs: /^aider \S+ needs Python >= 3\.\d+ in the task's image, which has no working python3/ },
    // Its own Python is built on the host (minutes) only for an image it can run on: nothing is built either.
    { agent: 'openhands' as const, needs: /^openhands 1\.16\.0 needs glibc >= 2\.36 in the task's image, which has no glibc \(a musl or distroless image\?\): use a task image with glibc 2\.36 or newer/ },
  ])('$agent is refused before any package is fetched, naming what the image lacks', async ({ agent, needs }) => {
    const cache = mkdtempSync(join(tmpdir(), 'berth-noglibc-'));
    const tools = mkdtempSync(join(tmpdir(), 'berth-noglibc-tools-'));
    const err = await ensureLayer(provider, INSTALLED_AGENTS[agent], BUSYBOX_IMAGE, cache, tools).then(() => null, (e: unknown) => e);
    expect(err).toBeInstanceOf(AgentInstallFailed);
    expect((err as Error).message).toMatch(needs);
    expect(readdirSync(cache)).toEqual([]);
    expect(readdirSync(tools)).toEqual([]);
    expect(await docker.getImage(await baseTagOf()).inspect().then(() => 'tagged', () => 'no tag')).toBe('no tag');
  }, 60_000);
});
