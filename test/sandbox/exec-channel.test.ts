// Root commands over the keep-alive's channel (src/sandbox/docker/exec-channel.ts) against the real thing: the same
// command through a Docker exec in the same container gives the same exit code, output, truncation and timeout; the
// engine sees no exec for them (its live events); other users still go through exec; a container removed mid-command
// fails it as a lost sandbox.
import Docker from 'dockerode';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SandboxLost } from '../../src/sandbox/errors.ts';
import { runExec } from '../../src/sandbox/docker/exec.ts';
import { KEEP_ALIVE_READY } from '../../src/sandbox/seed-scripts.ts';
import { startFailure } from '../../src/verify/sandbox-scripts.ts';
import type { RawExecOptions } from '../../src/sandbox/exec.ts';
import type { ExecNotStarted, SandboxHandle } from '../../src/sandbox/types.ts';
import { makeSpec, provider, teardownAll } from './helpers.ts';

const docker = new Docker();
const made: string[] = [];
let handle: SandboxHandle;

/** The engine's exec events for one container while `fn` runs, watched live. */
async function execsDuring<T>(containerId: string, fn: () => Promise<T>): Promise<{ result: T; execs: number }> {
  const stream = await docker.getEvents({ filters: { type: ['container'], container: [containerId] } } as Docker.GetEventsOptions) as NodeJS.ReadableStream & { destroy(): void };
  let text = '';
  stream.on('data', (c: Buffer) => { text += c.toString(); });
  // The subscription is live once the engine answered; a moment for it to settle.
  await new Promise((r) => setTimeout(r, 200));
  const result = await fn();
  await new Promise((r) => setTimeout(r, 500));
  stream.destroy();
  const execs = text.split('\n').filter(Boolean).filter((l) => (JSON.parse(l) as { Action: string }).Action.startsWith('exec_create')).length;
  return { result, execs };
}

const bash = (command: string, extra: Partial<RawExecOptions> = {}): RawExecOptions => ({ argv: ['bash', '-c', command], user: 'root', ...extra });

describe('root commands over the keep-alive channel (docs/performance-notes.md, Commands without an exec)', () => {
  beforeAll(async () => {
    ({ handle } = await provider.seed(makeSpec(made, { workdir: '/app', env: { FROM_SPEC: 'spec' } })));
  }, 60_000);
  afterAll(async () => { await teardownAll(made); });

  const cases: Array<[string, RawExecOptions]> = [
    ['exit code, stdout and stderr', bash('echo out; echo err >&2; exit 3')],
    ['the default working directory and the container env', bash('pwd; echo "$FROM_SPEC"; echo "$HOME"; id -u; id -g')],
    // Sorted: the variables' order differs (sh builds the environment anew), their set does not.
    ['the whole environment, as env prints it', { argv: ['sh', '-c', 'env | sort'], user: 'root' }],
    ['the whole environment with a working directory and env of its own', { argv: ['sh', '-c', 'env | sort'], user: 'root', workdir: '/tmp', env: { B: '2' } }],
    ['a working directory and env of its own', bash('pwd; echo "$A $B"', { workdir: '/tmp', env: { A: "it's", B: 'two words $HOME' } })],
    ['output over the cap: the last bytes kept, truncated', bash('head -c 5000 /dev/zero | tr "\\0" a; echo tail-marker; seq 1 300 >&2', { outputCapBytes: 100 })],
    ['bytes that are not text', bash('printf "\\000\\001\\377\\n"')],
    ['a command past its timeout', bash('sleep 5', { timeoutSec: 1 })],
    ['argv as given, no shell', { argv: ['printf', '%s|', 'a b', "c'd", '$HOME'], user: 'root' }],
    // The script reaches the loop as lines its shell reads itself: arguments over several lines, backslashes, leading
    // and trailing blanks, and a line shaped like a request's header stay as they are.
    ['arguments over several lines', { argv: ['printf', '[%s]', 'one\n  two \\\n\\three\\', '\t tab ', '\nab 10 2\n', ''], user: 'root' }],
  ];
  for (const [what, opts] of cases) {
    it(`${what}: the same as through a Docker exec`, async () => {
      const viaExec = await runExec(docker, handle, opts);
      const { result: viaChannel, execs } = await execsDuring(handle.containerId, () => provider.driver.exec(handle, opts));
      expect(execs).toBe(0);
      expect(viaChannel).toEqual(viaExec);
    }, 60_000);
  }

  // Not the engine's own text: the channel says why itself (the same notStarted), in words a reader finds the same.
  const startFailures: Array<[string, RawExecOptions, Omit<ExecNotStarted, 'text'>, string]> = [
    ['a missing program', { argv: ['no-such-command-here'], user: 'root' }, { reason: 'no-program', program: 'no-such-command-here' }, '"no-such-command-here": executable file not found'],
    ['no bash on PATH', bash('true', { env: { PATH: '/nonexistent' } }), { reason: 'no-program', program: 'bash' }, 'the image has no bash'],
    ['no timeout on PATH', bash('true', { env: { PATH: '/nonexistent' }, timeoutSec: 5 }), { reason: 'no-program', program: 'timeout' }, 'the image has no timeout'],
    ['a missing working directory', { argv: ['pwd'], user: 'root', workdir: '/no/such/dir' }, { reason: 'no-workdir' }, 'chdir to cwd ("/no/such/dir")'],
  ];
  for (const [what, opts, notStarted, reason] of startFailures) {
    it(`${what}: exit 126 and the same start failure as a Docker exec's`, async () => {
      const viaExec = await runExec(docker, handle, opts);
      const viaChannel = await provider.driver.exec(handle, opts);
      expect([viaChannel.exitCode, viaExec.exitCode]).toEqual([126, 126]);
      expect(viaExec.notStarted).toEqual({ ...notStarted, text: expect.any(String) });
      expect(viaChannel.notStarted).toEqual({ ...notStarted, text: expect.any(String) });
      expect(startFailure(viaExec)).toContain(reason);
      expect(startFailure(viaChannel)).toContain(reason);
    }, 60_000);
  }

  it('a user the image lacks: a Docker exec that never started, typed no-user', async () => {
    const r = await provider.driver.exec(handle, bash('true', { user: 'ghost' }));
    expect(r.notStarted).toEqual({ reason: 'no-user', text: expect.stringContaining('ghost') });
  }, 60_000);

  it('forty commands at once each get their own answer', async () => {
    const { result, execs } = await execsDuring(handle.containerId, () => Promise.all(
      Array.from({ length: 40 }, (_, i) => provider.driver.exec(handle, bash(`sleep 0.$((RANDOM % 5)); echo ${i}; echo e${i} >&2; exit ${i % 7}`)))));
    expect(execs).toBe(0);
    expect(result.map((r) => [r.stdout, r.stderr, r.exitCode])).toEqual(Array.from({ length: 40 }, (_, i) => [`${i}\n`, `e${i}\n`, i % 7]));
  }, 60_000);

  it('a command as another user goes through exec, as that user', async () => {
    const { result, execs } = await execsDuring(handle.containerId, () => provider.driver.exec(handle, bash('id -u', { user: 'nobody' })));
    expect(execs).toBe(1);
    expect(result.stdout.trim()).not.toBe('0');
  }, 60_000);

  it('a keep-alive slower than a second to print its ready line (seen by `top` first) still serves root commands', async () => {
    const spec = makeSpec(made);
    const slow = ['/bin/sh', '-c', `set -e\nsleep 1.5\necho '${KEEP_ALIVE_READY}'\nexec sleep infinity`];
    const { handle: late } = await provider.driver.createOrAdoptSandbox({
      name: spec.name, labels: spec.labels, image: spec.image, keepAlive: slow, env: {}, user: 'root', workdir: '/', network: 'none',
    });
    const { result, execs } = await execsDuring(late.containerId, () => provider.driver.exec(late, bash('echo here')));
    expect(execs).toBe(0);
    expect(result).toMatchObject({ exitCode: 0, stdout: 'here\n' });
  }, 60_000);

  it('a container removed while a command runs: the command fails as a lost sandbox', async () => {
    const { handle: doomed } = await provider.seed(makeSpec(made));
    const outcome = provider.driver.exec(doomed, bash('sleep 60')).then(() => 'answered', (err: unknown) => err);
    await new Promise((r) => setTimeout(r, 500));
    await docker.getContainer(doomed.containerId).remove({ force: true });
    expect(await outcome).toBeInstanceOf(SandboxLost);
  }, 60_000);
});
