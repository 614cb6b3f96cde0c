// userCheckScript reads the image's /etc/passwd with the shell's own `read` (no `id` process): run here by a real
// sh under `set -e` (as the keep-alive runs it) against passwd files of each shape.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { userCheckScript } from '../../src/sandbox/seed-scripts.ts';

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
