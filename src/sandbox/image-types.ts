// What every engine's image operations take and give (SandboxProvider's image methods), whichever driver serves them.

export interface EngineImage {
  tags: string[];
  labels: Record<string, string>;
  sizeBytes: number;
  /** ISO time the image was made. */
  created: string;
}

export interface EnsureImageOptions {
  /** The local image suggested in the error message, e.g. berth-base:bookworm. */
  aliasHint?: string;
  pullTimeoutMs?: number;
}

export interface BuildImageOptions {
  contextDir: string;
  /** Relative to contextDir. Default "Dockerfile". */
  dockerfile?: string;
  tag: string;
  /** Default <state folder>/build-logs/<tag>.log. */
  logPath?: string;
  /** Default <state folder>/locks. */
  lockDir?: string;
  /** The provider's state folder (build logs, locks); default DEFAULT_STATE_DIR. */
  stateDir?: string;
  buildArgs?: Record<string, string>;
}

export interface BuildImageResult {
  tag: string;
  /** False when the image already existed or another caller built it. */
  built: boolean;
  logPath: string;
}
