// The provider-neutral part of a sandbox provider, written once over SandboxDriver: a single sandbox's seed, exec,
// detached processes, files, inspection, log tail, stop and start, removal and the janitor. Each engine's provider
// extends it with what is its own (images, networks, final states).
import { launchDetached, waitDetached } from './detached.ts';
import type { SandboxDriver } from './driver.ts';
import { downloadPath, uploadPath } from './files.ts';
import { runJanitor } from './janitor.ts';
import { seedSandbox } from './seed.ts';
import { entrypointState, pollHealthcheck, type EntrypointState } from './seed-phases.ts';
import type { DetachedLaunchOptions, DetachedLaunchResult, DetachedResult, DetachedWaitOptions, ExecOptions, ExecResult, HealthcheckSpec, JanitorOptions, JanitorReport, SandboxHandle, SandboxInfo, SandboxSpec, SeedResult, UploadEntry, UploadOptions } from './types.ts';
import type { SandboxProvider } from './provider.ts';

/** The methods of SandboxProvider that need nothing but the driver. */
export type DriverProviderPart = Pick<SandboxProvider,
  'seed' | 'attach' | 'exec' | 'waitDetached' | 'launchDetached' | 'upload' | 'download' | 'pathKind' | 'logTail' | 'inspect'
  | 'entrypointState' | 'stop' | 'resume' | 'teardown' | 'janitor' | 'pollHealthcheck'>;

export abstract class DriverSandboxProvider<D extends SandboxDriver = SandboxDriver> implements DriverProviderPart {
  constructor(readonly driver: D) {}

  seed(spec: SandboxSpec): Promise<SeedResult> {
    return seedSandbox(this.driver, spec);
  }

  attach(name: string): Promise<SandboxHandle> {
    return this.driver.attach(name);
  }

  /** Runs `bash -c <command>` (not -l: a login shell would reset the image's PATH from /etc/profile), or `sh -c`. */
  exec(handle: SandboxHandle, o: ExecOptions): Promise<ExecResult> {
    return this.driver.exec(handle, {
      argv: [o.shell ?? 'bash', '-c', o.command],
      user: o.user,
      workdir: o.workdir,
      env: o.env,
      timeoutSec: o.timeoutSec,
      outputCapBytes: o.outputCapBytes,
      streamToFile: o.streamToFile,
    });
  }

  waitDetached(handle: SandboxHandle, key: string, options?: DetachedWaitOptions): Promise<DetachedResult> {
    return waitDetached(this.driver, handle, key, options);
  }

  launchDetached(handle: SandboxHandle, options: DetachedLaunchOptions): Promise<DetachedLaunchResult> {
    return launchDetached(this.driver, handle, options);
  }

  upload(handle: SandboxHandle, source: string | UploadEntry[], containerDir: string, options?: UploadOptions): Promise<void> {
    return uploadPath(this.driver, handle, source, containerDir, options);
  }

  download(handle: SandboxHandle, containerPath: string, hostDir: string, options?: { exclude?: readonly string[] }): Promise<void> {
    return downloadPath(this.driver, handle, containerPath, hostDir, options);
  }

  pathKind(handle: SandboxHandle, containerPath: string): Promise<'dir' | 'file' | null> {
    return this.driver.pathKind(handle, containerPath);
  }

  logTail(handle: SandboxHandle): Promise<string> {
    return this.driver.logTail(handle);
  }

  inspect(handle: SandboxHandle): Promise<SandboxInfo> {
    return this.driver.inspect(handle);
  }

  entrypointState(handle: SandboxHandle): Promise<EntrypointState> {
    return entrypointState(this.driver, handle);
  }

  stop(handle: SandboxHandle): Promise<void> {
    return this.driver.stop(handle);
  }

  resume(handle: SandboxHandle): Promise<void> {
    return this.driver.start(handle);
  }

  /** By handle, the very sandbox (its engine id), never a newer one that took the name. */
  teardown(nameOrHandle: string | SandboxHandle): Promise<{ removed: boolean }> {
    return this.driver.remove({ name: typeof nameOrHandle === 'string' ? nameOrHandle : nameOrHandle.containerId, kind: 'single' });
  }

  janitor(options: JanitorOptions): Promise<JanitorReport> {
    return runJanitor(this.driver, options);
  }

  pollHealthcheck(handle: SandboxHandle, hc: HealthcheckSpec, watchEntrypoint: boolean, user?: string): Promise<void> {
    return pollHealthcheck(this.driver, handle, hc, watchEntrypoint, user);
  }
}
