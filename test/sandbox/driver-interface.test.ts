// The behaviour Berth builds on a sandbox is written once on the driver's primitives, for any driver (issue 13, the
// first Build point; docs/design.md section 6: "few driver primitives, shared behaviour written once on exec"). A
// recording driver (a plain SandboxDriver forwarding to the real Docker one) seeds a real sandbox from an image
// with an ENTRYPOINT and a HEALTHCHECK under an overlay RUN line, then runs a detached process: the RUN line, the
// entrypoint's start, the healthcheck probe, the seeded marker and the detached process all pass through its exec.
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentSandboxSpec } from '../../src/host/sandbox-spec.ts';
import { DETACHED_BASE, startDetached, waitDetached } from '../../src/sandbox/detached.ts';
import type { SandboxDriver } from '../../src/sandbox/driver.ts';
import { prepareAgentImage } from '../../src/sandbox/image-prep.ts';
import { containerName } from '../../src/sandbox/names.ts';
import { seedSandbox } from '../../src/sandbox/seed.ts';
import { ENTRYPOINT_KEY, entrypointState } from '../../src/sandbox/seed-phases.ts';
import { isSeeded, MARK_SEEDED } from '../../src/sandbox/seed-scripts.ts';
import type { RawExecOptions } from '../../src/sandbox/exec.ts';
import type { SandboxHandle } from '../../src/sandbox/types.ts';
import { loadTask } from '../../src/task/index.ts';
import { writeDataset } from '../helpers/tasks.ts';
import { BASE_IMAGE, provider, sh, teardownAll } from './helpers.ts';

/** Forwards every primitive to `inner` and records the argv of each exec. */
function recordingDriver(inner: SandboxDriver): { driver: SandboxDriver; execs: string[][] } {
  const execs: string[][] = [];
  const driver: SandboxDriver = {
    sandbox: inner.sandbox,
    capabilities: inner.capabilities,
    engineIdentity: () => inner.engineIdentity(),
    attach: (name) => inner.attach(name),
    inspect: (target) => inner.inspect(target),
    logTail: (target) => inner.logTail(target),
    createOrAdoptSandbox: (spec) => inner.createOrAdoptSandbox(spec),
    createOrAdoptGroup: (spec) => inner.createOrAdoptGroup(spec),
    inspectGroup: (project) => inner.inspectGroup(project),
    exec: (target, options: RawExecOptions) => {
      execs.push([...options.argv]);
      return inner.exec(target, options);
    },
    putArchive: (target, dir, archive) => inner.putArchive(target, dir, archive),
    getArchive: (target, path) => inner.getArchive(target, path),
    pathKind: (target, path) => inner.pathKind(target, path),
    stop: (target) => inner.stop(target),
    start: (target) => inner.start(target),
    remove: (sandbox) => inner.remove(sandbox),
    listByLabel: (labels) => inner.listByLabel(labels),
    imageConfiguration: (ref) => inner.imageConfiguration(ref),
    putOnNetwork: (target, network) => inner.putOnNetwork(target, network),
  };
  return { driver, execs };
}

const made: string[] = [];
const baseTag = `berth-test-driver-base:${randomBytes(4).toString('hex')}`;
const OVERLAY_LINE = 'echo overlay-ran > /overlay.txt';
const PROBE = 'test -f /tmp/entry-up';

beforeAll(async () => {
  // The base: an ENTRYPOINT that marks itself up and then runs what it is given, and a HEALTHCHECK reading the mark.
  const context = writeDataset({
    Dockerfile: `FROM ${BASE_IMAGE}\nCOPY --chmod=755 entry.sh /entry.sh\nENTRYPOINT ["/entry.sh"]\n` +
      `HEALTHCHECK --interval=1s --timeout=5s --start-period=20s --retries=3 CMD ${PROBE}\n`,
    'entry.sh': '#!/bin/sh\ntouch /tmp/entry-up\nexec "$@"\n',
  });
  await provider.images.build({ contextDir: context, tag: baseTag });
}, 120_000);

afterAll(async () => {
  await teardownAll(made);
  await provider.docker.getImage(baseTag).remove({ force: true }).catch(() => undefined);
});

describe('shared sandbox behaviour on the driver interface (issue 13; docs/design.md section 6)', () => {
  it('seeds (overlay RUN line, entrypoint, healthcheck, seeded marker) and runs a detached process through the driver\'s exec', async () => {
    // An overlay-mode task: one RUN line over the base, so the seed runs it in the sandbox (Task Folder Format § Dockerfile modes).
    const id = `t-${randomBytes(3).toString('hex')}`;
    const root = writeDataset({
      [`${id}/task.toml`]: '[agent]\ntimeout_sec = 60\n[verifier]\ntimeout_sec = 60\n',
      [`${id}/instruction.md`]: 'x\n',
      [`${id}/tests/test.sh`]: '#!/bin/bash\necho 1 > /logs/verifier/reward.txt\n',
      [`${id}/environment/Dockerfile`]: `FROM ${baseTag}\nRUN ${OVERLAY_LINE}\n`,
    });
    const task = await loadTask(join(root, id), { logger: { warn: () => undefined } });
    expect(task.image.mode).toBe('overlay');
    const prepared = await prepareAgentImage(provider, task, {});
    const workflowId = `berth/vitest-driver/${randomBytes(4).toString('hex')}/0`;
    const name = containerName(workflowId, 'run', 'agent');
    made.push(name);
    const spec = agentSandboxSpec(task, prepared, {
      name, labels: { batch: 'vitest-driver', workflowId, role: 'agent' }, taskEnv: {}, network: { network: 'none', env: {} },
    });

    const { driver, execs } = recordingDriver(provider.driver);
    const seeded = await seedSandbox(driver, spec);
    expect(seeded.adopted).toBe(false);
    const handle: SandboxHandle = seeded.handle;

    const ran = (pred: (argv: string[]) => boolean) => execs.some(pred);
    // The overlay RUN line (`/bin/sh -c`, Docker's shell for RUN), and its effect.
    expect(ran((a) => a[0] === '/bin/sh' && a.includes(OVERLAY_LINE))).toBe(true);
    expect(await sh(handle, 'cat /overlay.txt')).toBe('overlay-ran\n');
    // The image's entrypoint, started as a detached process under its key, and running.
    expect(ran((a) => a[3] === 'berth-start' && a[4] === `${DETACHED_BASE}/${ENTRYPOINT_KEY}`)).toBe(true);
    expect(await entrypointState(driver, handle)).toEqual({ state: 'running' });
    expect(await sh(handle, 'test -f /tmp/entry-up && echo up')).toBe('up\n');
    // The image's HEALTHCHECK, probed by exec.
    expect(ran((a) => a[0] === '/bin/sh' && a[1] === '-c' && a[2] === PROBE)).toBe(true);
    // The seeded marker, written and read on exec.
    expect(ran((a) => a.some((x) => x.includes(MARK_SEEDED)))).toBe(true);
    expect(await isSeeded(driver, handle)).toBe(true);

    // A detached process: started and waited for, both on the driver's exec.
    const before = execs.length;
    const start = await startDetached(driver, handle, { key: 'driver-probe', command: 'echo detached-out; exit 3' });
    expect(start.started).toBe(true);
    const done = await waitDetached(driver, handle, 'driver-probe', { tailBytes: 1024 });
    expect(done).toMatchObject({ exitCode: 3, timedOut: false, output: { tail: 'detached-out\n' } });
    const detached = execs.slice(before);
    expect(detached.some((a) => a[3] === 'berth-start' && a[4] === `${DETACHED_BASE}/driver-probe`)).toBe(true);
    expect(detached.some((a) => a[3] === 'berth-wait' && a[4] === `${DETACHED_BASE}/driver-probe`)).toBe(true);
  }, 180_000);
});
