// Issue 38: nothing above the drivers reads an engine's words. Loss is SandboxLost and a command that never started is
// ExecResult.notStarted, both typed inside src/sandbox/docker and src/sandbox/kubernetes; a phrase of Docker's, runc's
// or the kubelet's anywhere else in src would be a decision made on an engine's text again.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..', '..');
const DRIVERS = ['src/sandbox/docker/', 'src/sandbox/kubernetes/'];

/** Words only an engine says (matched without regard to case); "is paused" and the like are English too. */
const ENGINE_WORDS = [
  'OCI runtime', 'No such container', 'No such exec', 'is not running', 'marked for removal',
  'unable to find user', 'unable to find group', 'no matching entries in passwd', 'executable file not found', 'chdir to cwd',
  'unable to start container process', 'container not found', 'NonZeroExitCode',
];

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return sources(path);
    return e.name.endsWith('.ts') ? [path] : [];
  });
}

/** Each `file: word` where an engine's word appears outside the drivers. */
function engineWordsAbove(files: ReadonlyArray<{ path: string; text: string }>): string[] {
  return files
    .filter((f) => !DRIVERS.some((d) => f.path.startsWith(d)))
    .flatMap((f) => ENGINE_WORDS.filter((w) => f.text.toLowerCase().includes(w.toLowerCase())).map((w) => `${f.path}: ${w}`));
}

describe('engine words stay in the drivers', () => {
  it('no file of src outside src/sandbox/docker and src/sandbox/kubernetes holds one', () => {
    const files = sources(join(root, 'src')).map((p) => ({ path: relative(root, p), text: readFileSync(p, 'utf8') }));
    expect(files.length).toBeGreaterThan(100);
    expect(engineWordsAbove(files)).toEqual([]);
  });

  it('the check finds one above the drivers and allows it inside them', () => {
    const text = "if (/OCI runtime exec failed/.test(out)) return 'no bash';";
    expect(engineWordsAbove([{ path: 'src/verify/x.ts', text }, { path: 'src/sandbox/errors.ts', text: 'No such container' }]))
      .toEqual(['src/verify/x.ts: OCI runtime', 'src/sandbox/errors.ts: No such container']);
    expect(engineWordsAbove([{ path: 'src/sandbox/docker/x.ts', text }, { path: 'src/sandbox/kubernetes/y.ts', text: 'container not found' }])).toEqual([]);
  });
});
