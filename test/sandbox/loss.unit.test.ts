import { describe, expect, it } from 'vitest';
import { isDockerLoss } from '../../src/sandbox/docker/loss.ts';
import { EngineSilent } from '../../src/sandbox/docker/engine-deadline.ts';
import { connectionLost, ENGINE, SandboxLost } from '../../src/sandbox/errors.ts';
import { lossTyped } from '../../src/sandbox/loss-typed.ts';

// What the Docker engine answers (docker-modem's errors: statusCode, "(HTTP code N) reason - engine message", json).
const modem = (statusCode: number, engine: string) => Object.assign(new Error(`(HTTP code ${statusCode}) unexpected - ${engine} `), { statusCode, json: { message: engine } });
const code = (c: string) => Object.assign(new Error(`connect ${c} /var/run/docker.sock`), { code: c });

describe('isDockerLoss', () => {
  const cases: Array<[string, unknown, boolean]> = [
    ['404 no such container', modem(404, 'No such container: abc'), true],
    ['404 no such exec', modem(404, 'No such exec instance: 12'), true],
    ['404 no such image', modem(404, 'No such image: x:1'), false],
    ['404 a path not in the container', modem(404, 'Could not find the file /x in container abc'), false],
    ['409 is not running', modem(409, 'Container abc is not running'), true],
    ['409 is paused', modem(409, 'Container abc is paused, unpause the container before exec'), true],
    ['409 marked for removal', modem(409, 'container is marked for removal and cannot be started'), true],
    ['409 a name in use', modem(409, 'Conflict. The container name "/x" is already in use'), false],
    ['the engine message only in the text', Object.assign(new Error('(HTTP code 404) no such container - No such container: abc '), { statusCode: 404 }), true],
    ['ECONNREFUSED', code('ECONNREFUSED'), true],
    ['ENOENT on the socket', code('ENOENT'), true],
    ['socket hang up', new Error('socket hang up'), true],
    ['the engine silent (EngineSilent)', new EngineSilent('the create of x', 3), true],
    ['already SandboxLost', new SandboxLost('x', new Error('gone')), true],
    ['500', modem(500, 'driver failed'), false],
    ['a plain error', new Error('tar failed'), false],
    ['not an object', 'text', false],
  ];
  it.each(cases)('%s', (_what, err, lost) => {
    expect(isDockerLoss(err)).toBe(lost);
  });
});

describe('connectionLost (every driver)', () => {
  it.each([[code('ECONNRESET'), true], [code('EHOSTUNREACH'), true], [code('EACCES'), false], [new Error('socket hang up'), true], [null, false]] as Array<[unknown, boolean]>)('%s', (err, lost) => {
    expect(connectionLost(err)).toBe(lost);
  });
});

describe('lossTyped', () => {
  class Part {
    readonly prefix = 'p';
    fail(err: unknown): Promise<never> { return Promise.reject(err); }
    throwNow(err: unknown): never { throw err; }
    answer(handle: { name: string; containerId: string }): Promise<string> { return Promise.resolve(`${this.prefix}:${handle.name}`); }
    count(): number { return 3; }
  }
  const part = lossTyped(new Part(), isDockerLoss);

  it('a rejection that means loss becomes SandboxLost, named by the handle or the name the call was about, else the engine', async () => {
    const lost = await part.fail.call(part, code('ECONNREFUSED')).catch((e: unknown) => e);
    expect(lost).toBeInstanceOf(SandboxLost);
    expect((lost as SandboxLost).containerName).toBe(ENGINE);
    const named = lossTyped({ exec: (_h: { name: string; containerId: string }) => Promise.reject(modem(409, 'Container abc is not running')) }, isDockerLoss);
    await expect(named.exec({ name: 'box', containerId: 'c1' })).rejects.toMatchObject({ name: 'SandboxLost', containerName: 'box' });
    const byName = lossTyped({ attach: (_n: string) => Promise.reject(modem(404, 'No such container: box')) }, isDockerLoss);
    await expect(byName.attach('box')).rejects.toMatchObject({ name: 'SandboxLost', containerName: 'box' });
    const fixed = lossTyped({ pull: (_ref: string) => Promise.reject(code('ECONNREFUSED')) }, isDockerLoss, () => ENGINE);
    await expect(fixed.pull('img:1')).rejects.toMatchObject({ containerName: ENGINE });
  });

  it('a sync throw is typed too; what is not loss, and what the methods return, are unchanged', async () => {
    expect(() => part.throwNow(code('EPIPE'))).toThrow(SandboxLost);
    const other = new Error('tar failed');
    await expect(part.fail(other)).rejects.toBe(other);
    expect(() => part.throwNow(other)).toThrow(other);
    const already = new SandboxLost('x', new Error('gone'));
    await expect(part.fail(already)).rejects.toBe(already);
    expect(await part.answer({ name: 'h', containerId: 'c' })).toBe('p:h');
    expect(part.count()).toBe(3);
    expect(part.prefix).toBe('p');
    expect(part).toBeInstanceOf(Part);
  });
});
