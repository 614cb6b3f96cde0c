import type { V1Status } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import type { RawExecOptions } from '../../src/sandbox/exec.ts';
import { execArgv } from '../../src/sandbox/kubernetes/pod-spec.ts';
import { podNotStarted, podRefusedStart } from '../../src/sandbox/kubernetes/start-failure.ts';
import type { ExecNotStarted, SandboxHandle } from '../../src/sandbox/types.ts';

// What the launcher of an exec in a pod (execArgv: runuser or setpriv, sh's cd, env, timeout) and the runtime say when
// the command never started, as the Kubernetes driver types it. The texts as Debian bookworm's dash, util-linux and
// coreutils and busybox print them (run in berth-base:bookworm and a busybox image).
const handle: SandboxHandle = { name: 's', containerId: 'p', user: 'root', workdir: '/w' };
const BASH: RawExecOptions = { argv: ['bash', '-c', 'true'] };
const answer = (exitCode: number, stderr: string, stdout = '') => ({ exitCode, stdout, stderr });

describe('podNotStarted', () => {
  const cases: Array<[string, RawExecOptions, ReturnType<typeof answer>, Partial<ExecNotStarted> | undefined]> = [
    ['no such user (runuser)', { ...BASH, user: 'ghost' }, answer(1, 'runuser: user ghost does not exist or the user entry does not contain all the required fields\n'), { reason: 'no-user' }],
    ['no such group (runuser)', { ...BASH, user: 'root:nogroupx' }, answer(1, 'runuser: group nogroupx does not exist\n'), { reason: 'no-user' }],
    ['no working directory (dash)', { ...BASH, workdir: '/nope' }, answer(125, "/nope: 1: cd: can't cd to /nope\n"), { reason: 'no-workdir' }],
    ['no working directory (busybox)', { ...BASH, workdir: '/nope' }, answer(125, "/nope: cd: line 0: can't cd to /nope: No such file or directory\n"), { reason: 'no-workdir' }],
    ['no bash (dash)', BASH, answer(127, '/w: 1: exec: bash: not found\n'), { reason: 'no-program', program: 'bash' }],
    ['no bash (busybox)', BASH, answer(127, '/w: exec: line 0: bash: not found\n'), { reason: 'no-program', program: 'bash' }],
    ['no timeout', { ...BASH, timeoutSec: 5 }, answer(127, '/w: 1: exec: timeout: not found\n'), { reason: 'no-program', program: 'timeout' }],
    ['no bash behind timeout', { ...BASH, timeoutSec: 5 }, answer(127, "timeout: failed to run command 'bash': No such file or directory\n"), { reason: 'no-program', program: 'bash' }],
    ["no bash behind busybox's timeout", { ...BASH, timeoutSec: 5 }, answer(127, "timeout: can't execute 'bash': No such file or directory\n"), { reason: 'no-program', program: 'bash' }],
    ['no bash behind env', { ...BASH, env: { A: '1' } }, answer(127, "env: 'bash': No such file or directory\n"), { reason: 'no-program', program: 'bash' }],
    ['no setpriv for a numeric user', { ...BASH, user: '1000' }, answer(127, 'berth-user: 9: exec: setpriv: not found\n'), { reason: 'no-program', program: 'setpriv' }],
    // The command ran.
    ["the command's own missing program", BASH, answer(127, 'bash: line 1: exec: git: not found\n'), undefined],
    ['the command running timeout on a missing program', { ...BASH, timeoutSec: 5 }, answer(127, "timeout: failed to run command 'git': No such file or directory\n"), undefined],
    ['exit 1 with runuser words, as root (no runuser ran)', BASH, answer(1, 'runuser: user ghost does not exist\n'), undefined],
    ['exit 125 of its own', BASH, answer(125, 'failed\n'), undefined],
    ['a command that printed more', BASH, answer(127, '/w: 1: exec: bash: not found\n', 'out\n'), undefined],
    ['success', BASH, answer(0, ''), undefined],
  ];
  it.each(cases)('%s', (_what, options, r, want) => {
    const got = podNotStarted(execArgv(handle, options), options, r);
    if (want === undefined) expect(got).toBeUndefined();
    else expect(got).toEqual({ ...want, text: r.stderr.trim() });
  });
});

describe('podRefusedStart (a failed status that is not an exit)', () => {
  const launcher = execArgv(handle, BASH);
  const cases: Array<[string, V1Status, Partial<ExecNotStarted> | undefined]> = [
    ['no sh in the image', { status: 'Failure', reason: 'InternalError', message: 'Internal error occurred: error executing command in container: failed to exec in container: failed to start exec "1": OCI runtime exec failed: exec failed: unable to start container process: exec: "sh": executable file not found in $PATH: unknown' }, { reason: 'no-program', program: 'sh' }],
    ['no runuser, its name not given', { status: 'Failure', message: 'executable file not found in $PATH' }, { reason: 'no-program', program: 'sh' }],
    ['the container is gone', { status: 'Failure', reason: 'InternalError', message: 'container not found ("main")' }, undefined],
  ];
  it.each(cases)('%s', (_what, status, want) => {
    const got = podRefusedStart(launcher, status);
    if (want === undefined) expect(got).toBeUndefined();
    else expect(got).toEqual({ ...want, text: status.message });
  });
});
