// Pure rules of the image layer: what an image's configuration on record adds to a sandbox
// (Task Folder Verifiers § Image entrypoint, § Environment variables and secrets), GPU device requests
// (Task Folder Format § Environment), FROM aliasing, and the RUN line's environment.
import { describe, expect, it } from 'vitest';
import { CPU_HINT_VARIABLES, cpuHints } from '../../src/sandbox/cpu-hints.ts';
import { gpuDeviceRequests } from '../../src/sandbox/gpus.ts';
import { healthcheckFromImage, keepAliveEntrypoint, type ImageConfig } from '../../src/sandbox/image-config.ts';
import { aliasFromLines } from '../../src/sandbox/image-prep.ts';
import { withImageRuntime } from '../../src/sandbox/image-runtime.ts';
import { overlayArgv } from '../../src/sandbox/seed-phases.ts';
import { workdirSetupScript } from '../../src/sandbox/seed-scripts.ts';
import type { SandboxSpec } from '../../src/sandbox/types.ts';

const config = (over: Partial<ImageConfig> = {}): ImageConfig => ({
  id: 'sha256:abc', user: null, workdir: null, env: {}, entrypoint: null, cmd: null, healthcheck: null, ...over,
});
const spec = (env: Record<string, string> = {}): SandboxSpec => ({
  name: 'n', labels: { batch: 'b', workflowId: 'w', role: 'agent' }, image: 'sha256:abc', env, network: 'none',
});

describe('the image entrypoint (Task Folder Verifiers § Image entrypoint)', () => {
  it.each([
    [['/entry.sh', '--flag'], ['/entry.sh', '--flag', 'sh', '-c', 'sleep infinity']],
    ['/entry.sh', ['/entry.sh', 'sh', '-c', 'sleep infinity']],
    [[], null],
    [null, null],
  ] as const)('%j runs as %j: sh -c "sleep infinity" in place of CMD', (entrypoint, want) => {
    expect(keepAliveEntrypoint(entrypoint)).toEqual(want);
  });

  it('the CMD never joins the entrypoint; a prebuilt image (no record) gets none', () => {
    const s = withImageRuntime(spec(), { config: config({ entrypoint: ['/e'], cmd: ['python3', '-m', 'http.server'] }), healthcheck: null, entrypointEnv: { A: '1' }, cpus: null });
    expect(s.entrypoint).toEqual({ command: ['/e', 'sh', '-c', 'sleep infinity'], env: { A: '1' } });
    expect(withImageRuntime(spec(), { config: null, healthcheck: null, entrypointEnv: {}, cpus: null }).entrypoint).toBeUndefined();
  });
});

describe('healthchecks (Task Folder Format § Environment: healthcheck; § Compatibility)', () => {
  it('reads HEALTHCHECK (ns durations, Docker defaults for zero), CMD and CMD-SHELL; NONE is none', () => {
    expect(healthcheckFromImage({ Test: ['CMD-SHELL', 'test -f /ready'], Interval: 2e9, Retries: 5 })).toEqual({
      command: 'test -f /ready', intervalSec: 2, timeoutSec: 30, startPeriodSec: 0, startIntervalSec: 5, retries: 5,
    });
    expect(healthcheckFromImage({ Test: ['CMD', 'test', '-f', '/a b'] })?.command).toBe("'test' '-f' '/a b'");
    expect(healthcheckFromImage({ Test: ['NONE'] })).toBeNull();
    expect(healthcheckFromImage(undefined)).toBeNull();
  });

  it("the image's HEALTHCHECK is awaited before the task's own", () => {
    const image = { command: 'img', intervalSec: 1, timeoutSec: 1, startPeriodSec: 0, startIntervalSec: 1, retries: 1 };
    const task = { command: 'task', interval_sec: 5, timeout_sec: 30, start_period_sec: 0, start_interval_sec: 5, retries: 3 };
    const s = withImageRuntime(spec(), { config: config({ healthcheck: image }), healthcheck: task, entrypointEnv: {}, cpus: null });
    expect(s.healthchecks?.map((h) => h.command)).toEqual(['img', 'task']);
    expect(withImageRuntime(spec(), { config: null, healthcheck: task, entrypointEnv: {}, cpus: null }).healthchecks?.map((h) => h.command)).toEqual(['task']);
  });
});

describe('CPU-count hints (Task Folder Verifiers § Environment variables and secrets)', () => {
  it('every hint, floored to at least 1, only with a CPU limit', () => {
    expect(Object.keys(cpuHints(2))).toEqual([...CPU_HINT_VARIABLES]);
    expect(cpuHints(2.9).OMP_NUM_THREADS).toBe('2');
    expect(cpuHints(0.5).GOMAXPROCS).toBe('1');
    expect(cpuHints(null)).toEqual({});
  });

  it('a variable the task or the image on record sets wins', () => {
    const s = withImageRuntime(spec({ OMP_NUM_THREADS: '5' }), { config: config({ env: { MKL_NUM_THREADS: '7' } }), healthcheck: null, entrypointEnv: {}, cpus: 3 });
    expect(s.env.OMP_NUM_THREADS).toBe('5');
    expect(s.env.MKL_NUM_THREADS).toBeUndefined();
    expect(s.env.OPENBLAS_NUM_THREADS).toBe('3');
  });
});

describe('GPU device requests (Task Folder Format § Environment: gpus)', () => {
  it.each([
    [1, [{ Driver: '', Count: 1, DeviceIDs: [], Capabilities: [['gpu']], Options: {} }]],
    [4, [{ Driver: '', Count: 4, DeviceIDs: [], Capabilities: [['gpu']], Options: {} }]],
    [0, undefined],
    [null, undefined],
  ] as const)('gpus = %j → %j (what `docker run --gpus N` sends)', (gpus, want) => {
    expect(gpuDeviceRequests(gpus)).toEqual(want);
  });
});

describe('FROM lines through the alias map', () => {
  it('maps image FROM lines; leaves stages (any case), scratch and $ references alone; bases listed once', () => {
    const text = 'FROM ubuntu:24.04 AS Build\nRUN x\nFROM --platform=linux/amd64 build\nFROM scratch\nFROM $BASE\nfrom ubuntu:24.04\n';
    const out = aliasFromLines(text, { 'ubuntu:24.04': 'berth-base:bookworm', 'build:latest': 'never-this:1' });
    expect(out.text).toBe('FROM berth-base:bookworm AS Build\nRUN x\nFROM --platform=linux/amd64 build\nFROM scratch\nFROM $BASE\nfrom berth-base:bookworm\n');
    expect(out.bases).toEqual(['berth-base:bookworm']);
  });
});

describe('seed scripts', () => {
  it('a RUN line drops the container variables not set at its line, then runs under /bin/sh -c', () => {
    expect(overlayArgv({ command: 'make', env: {}, workdir: '/', user: 'root' })).toEqual(['/bin/sh', '-c', 'make']);
    expect(overlayArgv({ command: 'make', env: {}, unset: ['LATER', 'HOSTNAME'], workdir: '/', user: 'root' }))
      .toEqual(['/bin/sh', '-c', 'unset LATER HOSTNAME; exec /bin/sh -c "$1"', 'sh', 'make']);
  });

  it('the working directory is made and given to a non-root agent user, never for root or /', () => {
    expect(workdirSetupScript('/app', 'agent')).toContain("chown \"$owner\" '/app'");
    expect(workdirSetupScript('/app', 'root')).not.toContain('chown');
    expect(workdirSetupScript('/app', '0:0')).not.toContain('chown');
    expect(workdirSetupScript('/', 'agent')).not.toContain('chown');
  });
});
