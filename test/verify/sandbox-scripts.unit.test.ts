import { describe, expect, it } from 'vitest';
import type { ExecNotStarted, ExecResult } from '../../src/sandbox/types.ts';
import { clearScript, parsePreflight, parseTestReport, preflightScript, startFailure } from '../../src/verify/sandbox-scripts.ts';

const res = (exitCode: number, stdout: string, stderr = ''): ExecResult => ({
  exitCode,
  stdout,
  stderr,
  stdoutTruncated: false,
  stderrTruncated: false,
  timedOut: false,
});

describe('startFailure', () => {
  // What Berth tells the user is decided by the driver's notStarted, never by the engine's words (the drivers'
  // classifiers: docker-start-failure.unit.test.ts, kubernetes-start-failure.unit.test.ts).
  const notStarted = (n: ExecNotStarted): ExecResult => ({ ...res(126, n.text), notStarted: n });
  const cases: Array<[string, ExecResult, RegExp | null]> = [
    ['no bash', notStarted({ reason: 'no-program', program: 'bash', text: 'x' }), /no bash.*Debian or Ubuntu/],
    ['no timeout', notStarted({ reason: 'no-program', program: 'timeout', text: 'x' }), /no timeout/],
    ['no sh', notStarted({ reason: 'no-program', program: 'sh', text: 'x' }), /has no shell/],
    ['another program', notStarted({ reason: 'no-program', program: 'runuser', text: 'runuser missing' }), /^runuser missing$/],
    ['no such user', notStarted({ reason: 'no-user', text: 'no ghost here' }), /no ghost here.*\[verifier\]\.user/],
    ['no working directory', notStarted({ reason: 'no-workdir', text: 'no /w' }), /^no \/w$/],
    // Nothing the command printed counts: only the driver's word that it never started.
    ["a command's own failure", res(127, '', "timeout: failed to run command 'bash': No such file or directory\n"), null],
    ['an exit with the engine\'s words in it', res(126, 'OCI runtime exec failed: exec: "bash": executable file not found'), null],
    ['success', res(0, ''), null],
  ];
  it.each(cases)('%s', (_what, result, message) => {
    if (message === null) expect(startFailure(result)).toBeNull();
    else expect(startFailure(result)).toMatch(message);
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

describe('parseTestReport (what test.sh\'s exec sends back)', () => {
  const tarBytes = Buffer.from('pretend tar bytes \x00\x01\x02');
  const b64 = tarBytes.toString('base64');
  const cases: { name: string; stdout: string; truncated?: boolean; snapshot: Buffer | null; artifactsEmpty: boolean; gone?: boolean }[] = [
    { name: 'a whole snapshot, artifacts empty', stdout: `berth-artifacts-empty\nberth-snapshot-begin\n${b64.slice(0, 8)}\n${b64.slice(8)}\nberth-snapshot-end\n`, snapshot: tarBytes, artifactsEmpty: true },
    { name: 'no end mark: tar or base64 failed part way', stdout: `berth-snapshot-begin\n${b64}\n`, snapshot: null, artifactsEmpty: false },
    { name: 'output cut by the cap', stdout: `berth-snapshot-begin\n${b64}\nberth-snapshot-end\n`, truncated: true, snapshot: null, artifactsEmpty: false },
    { name: 'not base64 between the marks', stdout: 'berth-snapshot-begin\nnot base64!\nberth-snapshot-end\n', snapshot: null, artifactsEmpty: false },
    { name: 'too large to send: no marks at all', stdout: 'berth-artifacts-empty\n', snapshot: null, artifactsEmpty: true },
    { name: 'killed by the timeout: nothing', stdout: '', snapshot: null, artifactsEmpty: false },
    { name: 'test.sh removed /logs/verifier: nothing to copy', stdout: 'berth-verifier-logs-gone\n', snapshot: null, artifactsEmpty: false, gone: true },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const r = parseTestReport({ stdout: c.stdout, stdoutTruncated: c.truncated ?? false });
      expect(r.artifactsEmpty).toBe(c.artifactsEmpty);
      expect(r.verifierLogsGone ?? false).toBe(c.gone ?? false);
      expect(r.snapshot === null ? null : Buffer.compare(r.snapshot, c.snapshot!)).toBe(c.snapshot === null ? null : 0);
    });
  }
});
