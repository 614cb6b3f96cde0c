// userCheckScript and the pod check read a file with the shell's own `read` (lineMatches: no `id` or `grep` process):
// run here by a real sh under `set -e` (as the keep-alive runs it) against files of each shape.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ofPod } from '../../src/sandbox/kubernetes/driver.ts';
import { userCheckScript } from '../../src/sandbox/seed-scripts.ts';
import { lineMatches } from '../../src/sandbox/shell-lines.ts';

const dir = mkdtempSync(join(tmpdir(), 'berth-passwd-'));
const passwd = (name: string, text: string | null) => {
  const f = join(dir, name);
  if (text !== null) writeFileSync(f, text);
  return f;
};

function run(user: string, file: string): { code: number; stderr: string } {
  try {
    execFileSync('sh', ['-c', `set -e\n${userCheckScript(user, file)}\necho after`], { stdio: 'pipe' });
    return { code: 0, stderr: '' };
  } catch (err) {
    const e = err as { status: number; stderr: Buffer };
    return { code: e.status, stderr: e.stderr.toString() };
  }
}

const DEBIAN = 'root:x:0:0:root:/root:/bin/bash\ndaemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin\nagent:x:1000:1000::/home/agent:/bin/sh\n';

describe('userCheckScript: the user looked up in the image\'s /etc/passwd by the shell', () => {
  it.each([
    ['root, first line', 'root', passwd('debian', DEBIAN), true],
    ['a user on the last line', 'agent', passwd('debian', DEBIAN), true],
    ['a user on a last line with no newline', 'agent', passwd('no-newline', DEBIAN.trimEnd()), true],
    ['a name that is only a prefix of one', 'agen', passwd('debian', DEBIAN), false],
    ['a name that only appears in another field', 'daemon2', passwd('other-field', 'daemon2x:x:2:2::/home/daemon2:/bin/sh\n'), false],
    ['a name with a glob character', 'a*', passwd('debian', DEBIAN), false],
    ['no passwd file', 'root', passwd('missing', null), false],
    ['an empty passwd file', 'root', passwd('empty', ''), false],
    ['name:group form', 'agent:agent', passwd('debian', DEBIAN), true],
  ])('%s', (_what, user, file, exists) => {
    const r = run(user, file);
    if (exists) expect(r).toEqual({ code: 0, stderr: '' });
    else expect(r).toEqual({ code: 1, stderr: `user ${user.split(':')[0]} does not exist in the image: set [agent].user to an existing user or a numeric uid\n` });
  });

  it.each([['1000'], ['1000:1000'], ['']])('a bare uid (%s) needs no lookup', (user) => {
    expect(userCheckScript(user)).toBe('true');
  });
});

describe('lineMatches: whether a line of a file matches a case pattern, read by the shell', () => {
  const matches = (file: string, pattern: string) =>
    execFileSync('sh', ['-c', `set -e\n${lineMatches('m', file, pattern)}\necho "[$m]"`]).toString().trim();
  it.each([
    ['a line in the middle', 'a\nxx /pods/u-1/etc-hosts yy\nb\n', "*'/pods/u-1/'*", '[1]'],
    ['only a longer uid', 'xx /pods/u-12/etc-hosts\n', "*'/pods/u-1/'*", '[]'],
    ['the last line, no newline', 'a\nxx /pods/u-1/x', "*'/pods/u-1/'*", '[1]'],
    ['a pattern character in the quoted part stays literal', 'a*:x\n', "'a?':*", '[]'],
  ])('%s', (_what, text, pattern, want) => {
    expect(matches(passwd(`lines-${want}-${text.length}`, text), pattern)).toBe(want);
  });
  it('a missing file matches nothing, and set -e goes on', () => {
    expect(matches(passwd('no-such-file', null), '*')).toBe('[]');
  });
  it('the pod check does not run its script where the mount table names no such pod', () => {
    // ofPod reads /proc/self/mountinfo: this machine's own table names no pod of that uid (the cluster's suites show
    // it running in a pod's container).
    expect(readFileSync('/proc/self/mountinfo', 'utf8')).not.toContain('/pods/00000000-no-such-pod/');
    expect(() => execFileSync('sh', ['-c', ofPod('00000000-no-such-pod', 'echo ran')], { stdio: 'pipe' })).toThrow(/Command failed/);
  });
});
