import { describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { NullSandboxProvider } from '../../bench/null-sandbox.ts';
import { extractTar } from '../../src/sandbox/index.ts';
import { parsePreflight, parseTestReport, preflightScript, runTestShCommand, clearScript } from '../../src/verify/sandbox-scripts.ts';

// The null sandbox answers Berth's own code (the provider-neutral seed, detached processes, files, and the verifier's
// scripts) as a sandbox with every tool would, without a container: what bench/scale.ts needs to run whole episodes.
async function seeded() {
  const provider = new NullSandboxProvider('null-unit');
  const { handle, adopted } = await provider.seed({
    name: 'ep-1-agent', labels: { batch: 'b', workflowId: 'w1', role: 'agent' }, image: 'berth-base:bookworm', env: {}, workdir: '/app', network: 'bridge',
  });
  return { provider, handle, adopted };
}

describe('the null sandbox (bench/null-sandbox.ts) under Berth\'s provider-neutral code', () => {
  it('seeds a sandbox (root, the task\'s working directory) and adopts it by name on a retried seed', async () => {
    const { provider, handle, adopted } = await seeded();
    expect(adopted).toBe(false);
    expect(handle).toMatchObject({ name: 'ep-1-agent', user: 'root', workdir: '/app' });
    const again = await provider.seed({ name: 'ep-1-agent', labels: { batch: 'b', workflowId: 'w1', role: 'agent' }, image: 'x', env: {}, workdir: '/app', network: 'bridge' });
    expect(again).toEqual({ handle, adopted: true });
  });

  it('a launched detached process has exited 0 at the launch; a key never launched is missing', async () => {
    const { provider, handle } = await seeded();
    const launched = await provider.launchDetached(handle, { key: 'run-turn1', command: '/solution/solve.sh', tailBytes: 100 });
    expect(launched.state).toBe('started');
    expect(launched.done).toMatchObject({ exitCode: 0, timedOut: false, output: { size: 0, tail: '' } });
    expect(await provider.waitDetached(handle, 'run-turn1')).toMatchObject({ exitCode: 0, timedOut: false });
    await expect(provider.waitDetached(handle, 'never')).rejects.toThrow(/no detached process "never"/);
    expect(await provider.entrypointState(handle)).toEqual({ state: 'none' });
  });

  it('the verifier\'s preflight is ready and test.sh sends back /logs/verifier with reward 1', async () => {
    const { provider, handle } = await seeded();
    const res = await provider.exec(handle, { command: `${preflightScript(clearScript([]))}\nset +e\n${runTestShCommand('/app')}`, user: 'root', workdir: '/' });
    expect(parsePreflight(res.stdout)).toEqual({ missingStart: [], missingTransfer: [], shipsTestSh: false, ready: true });
    const report = parseTestReport(res);
    expect(report.artifactsEmpty).toBe(true);
    const dir = mkdtempSync(join(tmpdir(), 'null-sandbox-'));
    // Unpacked as the verifier unpacks it: the folder's contents into the host folder.
    await extractTar(Readable.from([report.snapshot!]), dir);
    expect(readFileSync(join(dir, 'reward.txt'), 'utf8')).toBe('1\n');
    expect(provider.driver.calls).toMatchObject({ 'exec:test.sh': 1 });
  });

  it('keeps uploaded files in memory and gives them back, by folder or by file; teardown removes the sandbox', async () => {
    const { provider, handle } = await seeded();
    await provider.upload(handle, [{ name: 'sub/a.txt', content: 'alpha' }, { name: 'b.txt', content: 'beta' }], '/app');
    expect(await provider.pathKind(handle, '/app/sub')).toBe('dir');
    expect(await provider.pathKind(handle, '/app/b.txt')).toBe('file');
    expect(await provider.pathKind(handle, '/nothing')).toBeNull();
    const dir = mkdtempSync(join(tmpdir(), 'null-sandbox-'));
    await provider.download(handle, '/app', dir);
    expect(readFileSync(join(dir, 'sub', 'a.txt'), 'utf8')).toBe('alpha');
    await provider.download(handle, '/app/b.txt', join(dir, 'one'));
    expect(readFileSync(join(dir, 'one', 'b.txt'), 'utf8')).toBe('beta');
    expect(await provider.teardown(handle)).toEqual({ removed: true });
    expect(provider.driver.held).toBe(0);
  });
});
