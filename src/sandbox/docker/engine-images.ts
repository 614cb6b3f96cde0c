// Image primitives the layers above the sandbox need besides building (installed agents' layers): an image's id,
// a second tag, a one-shot command in a throwaway container, and the images carrying a label.
import type Docker from 'dockerode';
import { ENGINE } from '../errors.ts';
import { asSandboxError } from './loss.ts';
import { ensureImage } from './images.ts';
import type { EngineImage } from '../image-types.ts';

export async function imageIdOf(docker: Docker, ref: string): Promise<string> {
  try {
    return String((await docker.getImage(ref).inspect()).Id);
  } catch (err) {
    throw asSandboxError(ENGINE, err);
  }
}

export async function tagImage(docker: Docker, ref: string, repo: string, tag: string): Promise<void> {
  try {
    await docker.getImage(ref).tag({ repo, tag });
  } catch (err) {
    throw asSandboxError(ENGINE, err);
  }
}

/** Runs `argv` once in a throwaway container of `image` with no network; its exit code and standard output. */
export async function runOnce(docker: Docker, image: string, argv: string[], o: { user?: string; labels?: Record<string, string> } = {}): Promise<{ exitCode: number; stdout: string }> {
  const container = await docker.createContainer({
    Image: image, Entrypoint: [argv[0]!], Cmd: argv.slice(1), User: o.user ?? '0', NetworkDisabled: true,
    Labels: o.labels ?? {}, HostConfig: { AutoRemove: false },
  });
  try {
    await container.start().catch(() => undefined);
    const { StatusCode } = (await container.wait()) as { StatusCode: number };
    const stdout = (await container.logs({ stdout: true, stderr: false })).toString('utf8').replace(/[\x00-\x08]/g, ' ');
    return { exitCode: StatusCode, stdout };
  } finally {
    await container.remove({ force: true }).catch(() => undefined);
  }
}

export async function imagesLabelled(docker: Docker, label: string): Promise<EngineImage[]> {
  const images = await docker.listImages({ filters: { label: [label] } });
  return images.map((i) => ({
    tags: (i.RepoTags ?? []).filter((t) => t !== '<none>:<none>'),
    labels: i.Labels ?? {},
    sizeBytes: i.Size,
    created: new Date(i.Created * 1000).toISOString(),
  }));
}

/** The engine's id and the name of the machine it runs on. */
export async function engineInfo(docker: Docker): Promise<{ id: string; name: string | null }> {
  const info = await docker.info();
  return { id: String(info.ID), name: info.Name ? String(info.Name) : null };
}

/** A container's first network address, or null when it has none. */
export async function addressOf(docker: Docker, container: string): Promise<string | null> {
  const info = await docker.getContainer(container).inspect();
  return Object.values(info.NetworkSettings.Networks ?? {}).map((n) => n.IPAddress).find((a) => a) ?? null;
}

/** An image's labels, or null when the engine does not have it. */
export async function imageLabels(docker: Docker, ref: string): Promise<Record<string, string> | null> {
  try {
    return (await docker.getImage(ref).inspect()).Config.Labels ?? {};
  } catch (err) {
    if ((err as { statusCode?: number }).statusCode === 404) return null;
    throw asSandboxError(ENGINE, err);
  }
}

/**
 * The files at `path` in `image` as a tar archive (Docker's archive API: the path's own name first), read from a
 * container created and never started; null when the image has nothing at `path`. The engine pulls `image` when it
 * lacks it (a registry reference another worker pushed).
 */
export async function imagePathArchive(docker: Docker, image: string, path: string): Promise<Buffer | null> {
  await ensureImage(docker, image);
  const container = await docker.createContainer({ Image: image, Entrypoint: ['/berth-never-started'], Cmd: [], NetworkDisabled: true })
    .catch((err: unknown) => { throw asSandboxError(ENGINE, err); });
  try {
    const stream = await container.getArchive({ path }).catch((err: { statusCode?: number }) => {
      if (err.statusCode === 404) return null;
      throw err;
    });
    if (stream === null) return null;
    const chunks: Buffer[] = [];
    for await (const chunk of stream as AsyncIterable<Buffer>) chunks.push(chunk);
    return Buffer.concat(chunks);
  } finally {
    await container.remove({ force: true }).catch(() => undefined);
  }
}
