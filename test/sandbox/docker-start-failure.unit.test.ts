import { describe, expect, it } from 'vitest';
import { dockerNotStarted } from '../../src/sandbox/docker/start-failure.ts';
import { channelNotStarted } from '../../src/sandbox/docker/exec-channel.ts';
import type { ExecNotStarted, ExecResult } from '../../src/sandbox/types.ts';

// What the Docker engine (20.10 and later: runc's text on the exec's own output, exit 126 or 127) and `timeout` say
// when an exec never started its command, as the driver types it; the engine texts as seen from this host's engine.
const BASH = ['bash', '-c', 'true'];
const answer = (exitCode: number, stdout: string, stderr = '') => ({ exitCode, stdout, stderr });

describe('dockerNotStarted', () => {
  const cases: Array<[string, string[], number | undefined, ReturnType<typeof answer>, Partial<ExecNotStarted> | undefined]> = [
    ['no bash', BASH, undefined, answer(126, 'OCI runtime exec failed: exec failed: unable to start container process: exec: "bash": executable file not found in $PATH: unknown\r\n'), { reason: 'no-program', program: 'bash' }],
    ['no timeout', BASH, 5, answer(126, 'OCI runtime exec failed: exec failed: unable to start container process: exec: "timeout": executable file not found in $PATH: unknown'), { reason: 'no-program', program: 'timeout' }],
    ['no bash behind timeout', BASH, 5, answer(127, '', "timeout: failed to run command 'bash': No such file or directory\n"), { reason: 'no-program', program: 'bash' }],
    ["no bash behind busybox's timeout", BASH, 5, answer(127, '', "timeout: can't execute 'bash': No such file or directory\n"), { reason: 'no-program', program: 'bash' }],
    ['an absolute path that is not there', ['/opt/x'], undefined, answer(127, 'OCI runtime exec failed: exec failed: unable to start container process: exec: "/opt/x": stat /opt/x: no such file or directory: unknown'), { reason: 'no-program', program: '/opt/x' }],
    ['no such user', BASH, undefined, answer(126, 'unable to find user ghost: no matching entries in passwd file\r\n'), { reason: 'no-user' }],
    ['no such group', BASH, undefined, answer(126, 'unable to find group nogroup: no matching entries in group file\r\n'), { reason: 'no-user' }],
    ['no working directory', BASH, undefined, answer(126, 'OCI runtime exec failed: exec failed: unable to start container process: chdir to cwd ("/no/such") set in config.json failed: no such file or directory: unknown'), { reason: 'no-workdir' }],
    ['another refusal of the runtime', BASH, undefined, answer(126, 'OCI runtime exec failed: exec failed: something else: unknown'), { reason: 'refused' }],
    // A command's own failures: it ran.
    ["the command's own missing program", BASH, undefined, answer(127, '', 'bash: line 1: git: command not found\n'), undefined],
    ['the command running timeout on a missing program', BASH, 5, answer(127, '', "timeout: failed to run command 'git': No such file or directory\n"), undefined],
    ['timeout words without a timeout of Berth\'s', BASH, undefined, answer(127, '', "timeout: failed to run command 'bash': No such file or directory\n"), undefined],
    ['the runtime\'s words with another exit', BASH, undefined, answer(1, 'OCI runtime exec failed'), undefined],
    ['success', BASH, undefined, answer(0, ''), undefined],
  ];
  it.each(cases)('%s', (_what, argv, timeoutSec, r, want) => {
    const got = dockerNotStarted(argv, timeoutSec, r);
    if (want === undefined) expect(got).toBeUndefined();
    else expect(got).toEqual({ ...want, text: `${r.stdout}\n${r.stderr}`.trim() });
  });
});

describe('channelNotStarted (the exec channel says why itself)', () => {
  const result = (exitCode: number, stdout: string, stderr = ''): ExecResult => ({ exitCode, stdout, stderr, stdoutTruncated: false, stderrTruncated: false, timedOut: false });
  const cases: Array<[string, ExecResult, Partial<ExecResult> | undefined]> = [
    ['a missing program: the mark taken off the output', result(126, 'berth:not-started no-program no such\nberth channel: unable to start the command: exec: "no such": executable file not found in $PATH\n'),
      { stdout: 'berth channel: unable to start the command: exec: "no such": executable file not found in $PATH\n', notStarted: { reason: 'no-program', program: 'no such', text: 'berth channel: unable to start the command: exec: "no such": executable file not found in $PATH' } }],
    ['a missing working directory', result(126, 'berth:not-started no-workdir \nwhy\n'), { stdout: 'why\n', notStarted: { reason: 'no-workdir', text: 'why' } }],
    ['timeout could not run the program', result(127, '', "timeout: failed to run command 'bash': No such file or directory\n"), { notStarted: { reason: 'no-program', program: 'bash', text: "timeout: failed to run command 'bash': No such file or directory" } }],
    ['the mark with another exit (the command printed it)', result(1, 'berth:not-started no-workdir \nwhy\n'), undefined],
    ['a command that ran', result(3, 'out\n', 'err\n'), undefined],
  ];
  it.each(cases)('%s', (_what, r, change) => {
    expect(channelNotStarted(BASH, 5, r)).toEqual(change === undefined ? r : { ...r, ...change });
  });
});
