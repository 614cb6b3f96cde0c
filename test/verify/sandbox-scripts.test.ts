import { describe, expect, it } from 'vitest';
import type { ExecResult } from '../../src/sandbox/types.ts';
import { clearScript, parsePreflight, preflightScript, startFailure } from '../../src/verify/sandbox-scripts.ts';

const res = (exitCode: number, stdout: string, stderr = ''): ExecResult => ({
  exitCode,
  stdout,
  stderr,
  stdoutTruncated: false,
  stderrTruncated: false,
  timedOut: false,
});

describe('startFailure', () => {
  it("recognises Docker's own start failures and names the fix", () => {
    expect(startFailure(res(126, 'OCI runtime exec failed: exec failed: unable to start container process: exec: "bash": executable file not found in $PATH: unknown\r\n'))).toMatch(/no bash.*Debian or Ubuntu/);
    expect(startFailure(res(126, 'OCI runtime exec failed: exec failed: unable to start container process: exec: "timeout": executable file not found in $PATH: unknown'))).toMatch(/no timeout/);
    expect(startFailure(res(127, '', "timeout: failed to run command 'bash': No such file or directory\n"))).toMatch(/no bash/);
    expect(startFailure(res(126, 'unable to find user ghost: no matching entries in passwd file\r\n'))).toMatch(/ghost.*\[verifier\]\.user/);
  });

  it("leaves a command's own failures alone", () => {
    expect(startFailure(res(127, '', 'bash: line 1: git: command not found\n'))).toBeNull();
    expect(startFailure(res(127, '', "timeout: failed to run command 'git': No such file or directory\n"))).toBeNull();
    expect(startFailure(res(1, 'OCI runtime exec failed'))).toBeNull();
    expect(startFailure(res(0, ''))).toBeNull();
  });
});

describe('preflight and clear scripts', () => {
  it('parses what is missing, whether the image ships /tests/test.sh, and whether the clear ran', () => {
    expect(parsePreflight('berth-missing-start:\nberth-missing-transfer: tar gzip\n')).toEqual({
      missingStart: [],
      missingTransfer: ['tar', 'gzip'],
      shipsTestSh: false,
      ready: false,
    });
    expect(parsePreflight('berth-missing-start:\nberth-missing-transfer:\nberth-ships-test-sh\nberth-ready\n')).toMatchObject({ shipsTestSh: true, ready: true });
  });

  it('keeps declared inputs as regular files only and can leave /tests alone', () => {
    const script = clearScript(['actions.jsonl', "it's.txt"]);
    expect(script).toContain(`! \\( -type f \\( -name 'actions.jsonl' -o -name 'it'\\''s.txt' \\) \\)`);
    expect(script).toContain('/tests');
    expect(clearScript([], false)).not.toContain('/tests');
    expect(preflightScript(null)).toContain('true\necho berth-ready');
  });
});
