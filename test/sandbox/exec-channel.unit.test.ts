import { describe, expect, it } from 'vitest';
import { CHANNEL_ENDED, ChannelParser, CHANNEL_PROCESS, requestLine } from '../../src/sandbox/channel-protocol.ts';
import { launcherScript, NOT_FOUND_MARK } from '../../src/sandbox/kubernetes/pod-channel.ts';
import { requestScript, withExecChannel } from '../../src/sandbox/docker/exec-channel.ts';
import { CHANNEL_READY } from '../../src/sandbox/docker/keep-alive-stream.ts';
import { KEEP_ALIVE_READY } from '../../src/sandbox/seed-scripts.ts';
import { keepAliveCommand, seedPlan } from '../../src/sandbox/seed.ts';

const answer = (id: string, rc: number, out: string, err: string, totals?: [number, number]) =>
  Buffer.concat([Buffer.from(`berth:ch ${id} ${rc} ${Buffer.byteLength(out)} ${Buffer.byteLength(err)} ${totals?.[0] ?? Buffer.byteLength(out)} ${totals?.[1] ?? Buffer.byteLength(err)}\n`), Buffer.from(out), Buffer.from(err)]);

describe('ChannelParser: answers read off the keep-alive output', () => {
  const cases: Array<[string, Buffer[], Array<{ id: string; exitCode: number; stdout: string; stderr: string }>]> = [
    ['one answer in one chunk', [answer('ab', 0, 'hi\n', '')], [{ id: 'ab', exitCode: 0, stdout: 'hi\n', stderr: '' }]],
    ['two answers in one chunk', [Buffer.concat([answer('a1', 3, 'x', 'y\n'), answer('b2', 0, '', '')])],
      [{ id: 'a1', exitCode: 3, stdout: 'x', stderr: 'y\n' }, { id: 'b2', exitCode: 0, stdout: '', stderr: '' }]],
    ['an answer split anywhere, its header too', (() => { const b = answer('cd', 1, 'line one\nline two\n', 'oops'); return [b.subarray(0, 5), b.subarray(5, 30), b.subarray(30)]; })(),
      [{ id: 'cd', exitCode: 1, stdout: 'line one\nline two\n', stderr: 'oops' }]],
    ['output that looks like a header is output', [answer('ef', 0, 'berth:ch 00 0 0 0 0 0\n', '')], [{ id: 'ef', exitCode: 0, stdout: 'berth:ch 00 0 0 0 0 0\n', stderr: '' }]],
    ['a line that is not an answer is skipped', [Buffer.concat([Buffer.from('something else\n'), answer('a0', 0, 'ok', '')])], [{ id: 'a0', exitCode: 0, stdout: 'ok', stderr: '' }]],
    ['bytes that are not text pass as they are', [answer('ff', 0, '\u0000\u0001', '')], [{ id: 'ff', exitCode: 0, stdout: '\u0000\u0001', stderr: '' }]],
  ];
  it.each(cases)('%s', (_what, chunks, expected) => {
    const parser = new ChannelParser();
    const got = chunks.flatMap((c) => parser.push(c));
    expect(got.map((a) => ({ id: a.id, exitCode: a.exitCode, stdout: a.stdout.toString('latin1'), stderr: a.stderr.toString('latin1') })))
      .toEqual(expected.map((e) => ({ ...e, stdout: Buffer.from(e.stdout).toString('latin1'), stderr: Buffer.from(e.stderr).toString('latin1') })));
  });

  it('tells each line that is not an answer (a keep-alive saying its loop ended), answers still parsed', () => {
    const lines: string[] = [];
    const got = new ChannelParser((l) => lines.push(l)).push(Buffer.concat([Buffer.from('berth: keep-alive ready\n'), answer('a0', 0, 'x\n', ''), Buffer.from(`${CHANNEL_ENDED}\n`)]));
    expect(got.map((a) => a.id)).toEqual(['a0']);
    expect(lines).toEqual(['berth: keep-alive ready', CHANNEL_ENDED]);
  });

  it('the whole sizes in the container, beside what was sent', () => {
    const [a] = new ChannelParser().push(answer('aa', 0, 'tail', '', [9000, 0]));
    expect([a!.stdout.length, a!.stdoutBytes]).toEqual([4, 9000]);
  });
});

describe('withExecChannel: the keep-alive with its loop', () => {
  const plan = seedPlan({ name: 'n', labels: { batch: 'b', workflowId: 'w', role: 'agent' }, image: 'i', env: {}, network: 'none' }, { user: 'root', workdir: '/app' });
  it('Berth\'s keep-alive keeps its setup, prints the channel\'s ready line, and falls back to sleep infinity', () => {
    const before = keepAliveCommand(plan);
    const after = withExecChannel(before);
    expect(after.slice(0, 2)).toEqual(['/bin/sh', '-c']);
    expect(after[2]!.startsWith(before[2]!.slice(0, before[2]!.indexOf(`echo '${KEEP_ALIVE_READY}'`)))).toBe(true);
    expect(after[2]).toContain(`echo '${CHANNEL_READY}'`);
    expect(after[2]).toContain(` ${CHANNEL_PROCESS}\n`);
    expect(after[2]!.endsWith(`echo '${KEEP_ALIVE_READY}'\nexec sleep infinity`)).toBe(true);
    expect(CHANNEL_READY.startsWith(KEEP_ALIVE_READY)).toBe(true);
  });
  it.each([
    ['a caller\'s own keep-alive', ['sleep', 'infinity']],
    ['a shell script not ending in Berth\'s ready line', ['/bin/sh', '-c', 'exec sleep infinity']],
  ])('%s is left as it is', (_what, argv) => {
    expect(withExecChannel(argv)).toEqual(argv);
  });
});

describe('requestScript', () => {
  it('quotes the working directory, each variable and each argument', () => {
    const script = requestScript(['printf', '%s', "it's $HOME"], '/a b', { K: 'v w', Q: "x'y" });
    expect(script).toContain("cd -- '/a b' 2>/dev/null || ");
    expect(script).toContain("export 'K=v w'\nexport 'Q=x'\\''y'\n");
    expect(script.endsWith("exec 'printf' '%s' 'it'\\''s $HOME'\n")).toBe(true);
  });
});

describe('requestLine: the header, then the script as lines', () => {
  it.each([
    ['a script ending in a newline', 'a\nb\n', 'ab12 100 2\na\nb\n'],
    ['one without: the newline added', 'a\nb', 'ab12 100 2\na\nb\n'],
    ['an argument over several lines counts each', "exec 'x\ny'\n", "ab12 100 2\nexec 'x\ny'\n"],
  ])('%s', (_what, script, line) => {
    expect(requestLine('ab12', 100, script)).toBe(line);
  });
});

describe('launcherScript: a pod\'s exec argv as a channel request', () => {
  it('execs the launcher quoted, after asking for its first program as the runtime would', () => {
    expect(launcherScript(['runuser', '-u', 'a b', '--', 'sh', '-c', "echo '$x'"])).toBe(
      `command -v 'runuser' >/dev/null 2>&1 || { echo ${NOT_FOUND_MARK}; exit 127; }\nexec 'runuser' '-u' 'a b' '--' 'sh' '-c' 'echo '\\''$x'\\'''\n`,
    );
  });
});
