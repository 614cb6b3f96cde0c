import { describe, expect, it } from 'vitest';
import { channelKeepAlive, CHDIR_SCRIPT, execArgv, NUMERIC_USER_SCRIPT, numericUser, podName, reapingKeepAlive, singlePod } from '../../src/sandbox/kubernetes/pod-spec.ts';
import { CHANNEL_ENDED, CHANNEL_LOOP, CHANNEL_PROCESS } from '../../src/sandbox/channel-protocol.ts';
import { shellQuote } from '../../src/sandbox/names.ts';
import type { SingleSandboxSpec } from '../../src/sandbox/driver.ts';

const handle = { name: 'x', containerId: 'x', user: 'agent', workdir: '/app' };

describe('pod names from sandbox names', () => {
  it.each([
    ['berth-hello-agent-0123456789ab', 'berth-hello-agent-0123456789ab'],
    ['Berth_k8s.Driver-1', /^berth-k8s-driver-1-[0-9a-f]{10}$/],
    ['---', /^s-[0-9a-f]{10}$/],
    ['a'.repeat(80), /^a{52}-[0-9a-f]{10}$/],
  ])('%s', (name, want) => {
    const got = podName(name);
    if (typeof want === 'string') expect(got).toBe(want); else expect(got).toMatch(want);
    expect(got.length).toBeLessThanOrEqual(63);
    expect(got).toMatch(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/);
  });

  it('gives two names that clean to the same text different pods', () => {
    expect(podName('Task.A')).not.toBe(podName('task_a'));
  });
});

describe('the argv an exec runs in a pod', () => {
  const cd = (dir: string) => ['sh', '-c', CHDIR_SCRIPT, dir];
  it.each([
    ['the handle\'s user and workdir', {}, ['runuser', '-u', 'agent', '--', ...cd('/app'), 'true']],
    ['root, no runuser', { user: 'root' }, [...cd('/app'), 'true']],
    ['uid 0', { user: '0' }, [...cd('/app'), 'true']],
    ['user:group', { user: 'agent:staff' }, ['runuser', '-u', 'agent', '-g', 'staff', '--', ...cd('/app'), 'true']],
    ['a bare uid, through setpriv', { user: '1234' }, ['sh', '-c', NUMERIC_USER_SCRIPT, 'berth-user', '1234', '', ...cd('/app'), 'true']],
    ['uid:gid', { user: '1234:55' }, ['sh', '-c', NUMERIC_USER_SCRIPT, 'berth-user', '1234', '55', ...cd('/app'), 'true']],
    ['uid 0 with another group', { user: '0:55' }, ['sh', '-c', NUMERIC_USER_SCRIPT, 'berth-user', '0', '55', ...cd('/app'), 'true']],
    ['env and budget', { user: 'root', workdir: '/', env: { A: '1' }, timeoutSec: 3 }, [...cd('/'), 'env', 'A=1', 'timeout', '-k', '5', '3', 'true']],
  ])('%s', (_what, options, want) => {
    expect(execArgv(handle, { argv: ['true'], ...options })).toEqual(want);
  });
});

describe('numeric users', () => {
  it.each([
    ['1234', { uid: '1234', gid: '' }],
    ['1234:55', { uid: '1234', gid: '55' }],
    ['agent', null],
    ['agent:55', null],
    ['1234:staff', null],
    ['12a', null],
  ])('%s', (user, want) => {
    expect(numericUser(user)).toEqual(want);
  });
});

/** Keep-alives that are not Berth's shape (`sh -c '…exec sleep infinity'`): neither rewrite touches them. */
const notRewritten: Array<[string[], null]> = [
  [['sleep', 'infinity'], null],
  [['bash', '-c', 'exec sleep infinity'], null],
  [['sh', '-c', 'exec sleep infinity; true'], null],
];

/** A single sandbox's spec with `keepAlive`, the rest plain. */
const sandboxSpec = (keepAlive: string[]): SingleSandboxSpec => ({
  name: 'r', labels: { batch: 'b', workflowId: 'w', role: 'agent' }, image: 'img', keepAlive, env: {}, user: 'root', workdir: '/', network: 'bridge',
});

describe('a single pod\'s keep-alive reaps orphans itself', () => {
  const single = (keepAlive: string[]) => singlePod(sandboxSpec(keepAlive));
  const loop = '{ set +e; while :; do sleep infinity & wait $!; done; }';
  it.each([
    [['/bin/sh', '-c', "set -e\nmkdir -p /logs\necho 'ready'\nexec sleep infinity"], ['/bin/sh', '-c', `set -e\nmkdir -p /logs\necho 'ready'\n${loop}`]],
    [['sh', '-c', 'useradd u && exec sleep infinity'], ['sh', '-c', `useradd u && ${loop}`]],
    [['sh', '-c', 'exec sleep infinity'], ['sh', '-c', loop]],
    ...notRewritten,
  ])('%j -> %j', (keepAlive, want) => {
    expect(reapingKeepAlive(keepAlive)).toEqual(want);
  });
  it('drops the shared PID namespace only when the keep-alive reaps', () => {
    const reaping = singlePod(sandboxSpec(['sh', '-c', 'exec sleep infinity']), false);
    expect(reaping.spec!.shareProcessNamespace).toBeUndefined();
    expect(reaping.spec!.containers[0]!.command).toEqual(['sh', '-c', loop]);
    expect(reaping.spec!.containers[0]!.stdin).toBeUndefined();
    const channelled = single(['sh', '-c', 'exec sleep infinity']);
    expect(channelled.spec!.shareProcessNamespace).toBeUndefined();
    expect(channelled.spec!.containers[0]!.command).toEqual(channelKeepAlive(['sh', '-c', 'exec sleep infinity']));
    const other = single(['sleep', 'infinity']);
    expect(other.spec!.shareProcessNamespace).toBe(true);
    expect(other.spec!.containers[0]!.command).toEqual(['sleep', 'infinity']);
    expect(other.spec!.containers[0]!.stdin).toBeUndefined();
  });
});

describe('a single pod\'s keep-alive serves requests on its stdin', () => {
  const tail = [
    '{ if command -v tail >/dev/null 2>&1 && command -v wc >/dev/null 2>&1 && mkdir -p -m 700 /run/berth-channel 2>/dev/null; then',
    '  set +e; sleep infinity 3<&- &',
    `  /bin/sh -c ${shellQuote(CHANNEL_LOOP)} ${CHANNEL_PROCESS} <&3 3<&- &`,
    `  exec 3<&-; wait $!; echo '${CHANNEL_ENDED}'`,
    'fi',
    'exec 3<&-',
    '{ set +e; while :; do sleep infinity & wait $!; done; }; }',
  ].join('\n');
  it.each([
    [['/bin/sh', '-c', "set -e\nmkdir -p /logs\necho 'ready'\nexec sleep infinity"], ['/bin/sh', '-c', `exec 3<&0 </dev/null\nset -e\nmkdir -p /logs\necho 'ready'\n${tail}`]],
    // A setup that fails still ends the keep-alive: the loop and the init are one command after its `&&`.
    [['sh', '-c', 'useradd u && exec sleep infinity'], ['sh', '-c', `exec 3<&0 </dev/null\nuseradd u && ${tail}`]],
    ...notRewritten,
  ])('%j', (keepAlive, want) => {
    expect(channelKeepAlive(keepAlive)).toEqual(want);
  });
  it('keeps the container\'s stdin open across attaches', () => {
    const pod = singlePod(sandboxSpec(['sh', '-c', 'exec sleep infinity']));
    expect(pod.spec!.containers[0]).toMatchObject({ stdin: true, stdinOnce: false });
  });
});
