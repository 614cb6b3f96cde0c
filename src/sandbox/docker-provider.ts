import type Docker from 'dockerode';
import { launchDetached, startDetached, waitDetached } from './detached.ts';
import { dockerFromEnv } from './docker-client.ts';
import { janitorGroups } from './docker/compose-group.ts';
import { asSandboxError, SandboxLost } from './errors.ts';
import { runExec } from './exec.ts';
import { downloadPath, uploadPath } from './files.ts';
import { gpuSupport } from './gpus.ts';
import { readImageConfig, type ImageConfig } from './image-config.ts';
import { buildImage, ensureImage, type BuildImageOptions, type BuildImageResult, type EnsureImageOptions } from './images.ts';
import { inspectSandbox, resumeSandbox, runJanitor, stopSandbox, teardownSandbox } from './lifecycle.ts';
import { handleFromInspect, seedSandbox } from './seed.ts';
import { entrypointState, type EntrypointState } from './seed-phases.ts';
import type {
  DetachedLaunchOptions,
  DetachedLaunchResult,
  DetachedResult,
  DetachedStartOptions,
  DetachedStartResult,
  DetachedWaitOptions,
  ExecOptions,
  GpuSupport,
  ExecResult,
  JanitorOptions,
  JanitorReport,
  SandboxHandle,
  SandboxInfo,
  SandboxProvider,
  SandboxSpec,
  SeedResult,
  UploadEntry,
  UploadOptions,
} from './types.ts';

export class DockerSandboxProvider implements SandboxProvider {
  constructor(readonly docker: Docker = dockerFromEnv()) {}

  seed(spec: SandboxSpec): Promise<SeedResult> {
    return seedSandbox(this.docker, spec);
  }

  async attach(name: string): Promise<SandboxHandle> {
    try {
      return handleFromInspect(await this.docker.getContainer(name).inspect());
    } catch (err) {
      throw (err as { statusCode?: number }).statusCode === 404 ? new SandboxLost(name, err) : asSandboxError(name, err);
    }
  }

  /** Runs `bash -c <command>` (not -l: a login shell would reset the image's PATH from /etc/profile). */
  exec(handle: SandboxHandle, o: ExecOptions): Promise<ExecResult> {
    return runExec(this.docker, handle, {
      argv: ['bash', '-c', o.command],
      user: o.user,
      workdir: o.workdir,
      env: o.env,
      timeoutSec: o.timeoutSec,
      outputCapBytes: o.outputCapBytes,
      streamToFile: o.streamToFile,
    });
  }

  startDetached(handle: SandboxHandle, options: DetachedStartOptions): Promise<DetachedStartResult> {
    return startDetached(this.docker, handle, options);
  }

  waitDetached(handle: SandboxHandle, key: string, options?: DetachedWaitOptions): Promise<DetachedResult> {
    return waitDetached(this.docker, handle, key, options);
  }

  launchDetached(handle: SandboxHandle, options: DetachedLaunchOptions): Promise<DetachedLaunchResult> {
    return launchDetached(this.docker, handle, options);
  }

  upload(handle: SandboxHandle, source: string | UploadEntry[], containerDir: string, options?: UploadOptions): Promise<void> {
    return uploadPath(this.docker, handle, source, containerDir, options);
  }

  download(handle: SandboxHandle, containerPath: string, hostDir: string): Promise<void> {
    return downloadPath(this.docker, handle, containerPath, hostDir);
  }

  inspect(handle: SandboxHandle): Promise<SandboxInfo> {
    return inspectSandbox(this.docker, handle);
  }

  entrypointState(handle: SandboxHandle): Promise<EntrypointState> {
    return entrypointState(this.docker, handle);
  }

  stop(handle: SandboxHandle): Promise<void> {
    return stopSandbox(this.docker, handle);
  }

  resume(handle: SandboxHandle): Promise<void> {
    return resumeSandbox(this.docker, handle);
  }

  teardown(nameOrHandle: string | SandboxHandle): Promise<{ removed: boolean }> {
    return teardownSandbox(this.docker, nameOrHandle);
  }

  /** Groups first (whole: containers, networks, volumes), then single sandboxes. */
  async janitor(options: JanitorOptions): Promise<JanitorReport> {
    const groups: JanitorReport = { removed: [], kept: [] };
    await janitorGroups(this.docker, options, groups);
    const singles = await runJanitor(this.docker, options);
    return { removed: [...groups.removed, ...singles.removed], kept: [...groups.kept, ...singles.kept] };
  }

  ensureImage(ref: string, options?: EnsureImageOptions): Promise<ImageConfig> {
    return ensureImage(this.docker, ref, options);
  }

  imageConfig(ref: string): Promise<ImageConfig | null> {
    return readImageConfig(this.docker, ref);
  }

  gpuSupport(probeImage: string): Promise<GpuSupport> {
    return gpuSupport(this.docker, probeImage);
  }

  buildImage(options: BuildImageOptions): Promise<BuildImageResult> {
    return buildImage(this.docker, options);
  }
}
