import type { ExecPort } from './driver.ts';
import { shellQuote } from './names.ts';
import { lineMatches } from './shell-lines.ts';
import type { SandboxHandle } from './types.ts';
import { SANDBOX_LAYOUT } from '../task/layout.ts';
import { DETACHED_BASE } from './detached.ts';

export const SEEDED_MARKER = `${SANDBOX_LAYOUT.logsDir}/.berth-seeded`;
/** The line the keep-alive prints once its root setup is done, just before `exec sleep infinity` (drivers wait for it). */
export const KEEP_ALIVE_READY = 'berth: keep-alive ready';
/** How Berth's keep-alive ends; a driver may put something of its own in that place (keepAliveBefore). */
export const KEEP_ALIVE_TAIL = 'exec sleep infinity';

/**
 * The script before `tail` when the keep-alive is `<shell> -c '…<tail>'` with `shell` one of `shells` (Berth's own
 * keep-alive, or one shaped like it), else null: what a driver rewrites the keep-alive's end on.
 */
export function keepAliveBefore(keepAlive: readonly string[], tail: string, shells: readonly string[] = ['/bin/sh']): string | null {
  const [shell, flag, script] = keepAlive;
  if (keepAlive.length !== 3 || !shells.includes(shell ?? '') || flag !== '-c' || !script?.endsWith(tail)) return null;
  return script.slice(0, -tail.length);
}

export const LOG_DIRS = [SANDBOX_LAYOUT.agentLogs, SANDBOX_LAYOUT.verifierLogs, SANDBOX_LAYOUT.artifactsLogs];

/**
 * Log folders (mode 777), the detached processes' markers (1777: a non-root agent or entrypoint makes its own), plus
 * the folders overlay RUN lines start in (root-owned, like Docker's WORKDIR).
 */
export function baseSetupScript(overlayWorkdirs: string[]): string {
  const dirs = LOG_DIRS.map(shellQuote).join(' ');
  // Folders the image does not have are made with their mode (one process); one it has gets a chmod.
  const lines = [
    `if ${LOG_DIRS.map((d) => `[ ! -e ${shellQuote(d)} ]`).join(' && ')}; then mkdir -p -m 777 ${dirs}; else mkdir -p ${dirs} && chmod 777 ${dirs}; fi`,
    `if [ ! -e ${DETACHED_BASE} ]; then mkdir -p -m 1777 ${DETACHED_BASE}; else chmod 1777 ${DETACHED_BASE}; fi`,
  ];
  if (overlayWorkdirs.length > 0) lines.push(`mkdir -p ${overlayWorkdirs.map(shellQuote).join(' ')}`);
  return lines.join(' && ');
}

/** root, 0 and their `:group` forms: the user that needs nothing given to it. */
export function isRootUser(user: string): boolean {
  const name = user.split(':')[0] ?? '';
  return name === 'root' || name === '0';
}

/**
 * Creates the working directory (`mkdir -p`) and, for an agent user other than root, gives it to that user
 * whether or not it existed, as NeMo Gym's seed does (NeMo Gym 0.7): an image's root-owned
 * WORKDIR is writable by the agent. `/` is never given away. A name with a passwd entry gets its login group; a
 * bare uid without one (the spec runs it as that uid) keeps group root.
 */
export function workdirSetupScript(workdir: string, user: string): string {
  const wd = shellQuote(workdir);
  const u = shellQuote(user);
  const lines = [`[ -d ${wd} ] || mkdir -p ${wd} || { echo "cannot create the working directory ${workdir}" >&2; exit 1; }`];
  if (!isRootUser(user) && workdir !== '/') {
    lines.push(
      `case ${u} in *:*) owner=${u} ;; *) if id -u ${u} >/dev/null 2>&1; then owner=${u}:; else owner=${u}; fi ;; esac`,
      `chown "$owner" ${wd} || { echo "cannot give ${workdir} to user ${user}: check [agent].user" >&2; exit 1; }`,
    );
  }
  return lines.join('\n');
}

/**
 * Fails when a named user does not exist in the image (a bare uid or uid:gid always runs). The image's /etc/passwd
 * is read by the shell itself (no process), as the runtime looks a user up when it starts a command as that user.
 */
export function userCheckScript(user: string, passwd = '/etc/passwd'): string {
  const name = user.split(':')[0] ?? '';
  if (name === '' || /^\d+$/.test(name)) return 'true';
  return [
    lineMatches('u_found', passwd, `${shellQuote(name)}:*`),
    `[ -n "$u_found" ] || { echo "user ${name} does not exist in the image: set [agent].user to an existing user or a numeric uid" >&2; exit 1; }`,
  ].join('\n');
}

// The shell writes it itself (`touch` would be a process of its own).
export const MARK_SEEDED = `: > ${SEEDED_MARKER}`;

/** Whether the sandbox finished its seed: a retried seed adopts it then, instead of seeding it again. */
export async function isSeeded(driver: ExecPort, handle: SandboxHandle): Promise<boolean> {
  const check = await driver.exec(handle, { argv: ['test', '-e', SEEDED_MARKER], user: 'root', workdir: '/' });
  return check.exitCode === 0;
}
