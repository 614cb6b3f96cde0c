// Compose keys that stay inside the container run (issue 22, "Compose refusals narrowed to what reaches outside
// the container"; docs/departures.md, Compose tasks): main on a named network, cap_add SYS_PTRACE and
// security_opt seccomp:unconfined. Harbor 0.25 passes them to `docker compose up` as written; the engine decides.
import { afterAll, describe, expect, it } from 'vitest';
import { readComposePlan } from '../../src/task/compose.ts';
import { BASE_IMAGE, composeFolder, groupSpec, sh, testDriver, uniqueProject } from './helpers.ts';

const driver = testDriver();
const made: string[] = [];
afterAll(async () => {
  for (const p of made) await driver.remove({ name: p, kind: 'group' });
});

const CAP_SYS_PTRACE = 19n;
const COMPOSE = `
services:
  main:
    cap_add: [SYS_PTRACE]
    security_opt: ["seccomp:unconfined"]
    networks: [backend]
  db:
    image: ${BASE_IMAGE}
    command: ["sleep", "infinity"]
    networks: [backend]
  outside:
    image: ${BASE_IMAGE}
    command: ["sleep", "infinity"]
networks:
  backend: {}
`;

/** Starts `sleep` as nobody and reads its /proc/PID/environ as root: ptrace-mode access, which needs CAP_SYS_PTRACE across uids. */
const READ_OTHER_ENVIRON = `su -s /bin/sh nobody -c 'exec env SECRET_OF_NOBODY=42 sleep 60' & sleep 0.5
pid=$(pgrep -u nobody -x sleep | head -n1); tr '\\0' '\\n' < /proc/$pid/environ | grep SECRET_OF_NOBODY`;

const capEff = async (h: Parameters<typeof sh>[0]) => BigInt(`0x${(await sh(h, "awk '/^CapEff/ {print $2}' /proc/self/status")).stdout.trim()}`);

describe('a group whose main has SYS_PTRACE, no seccomp profile and a named network', () => {
  const project = uniqueProject('bounds');
  made.push(project);

  it('loads, and main runs with the capability, unconfined by seccomp, on its named network only', async () => {
    expect(() => readComposePlan('environment/docker-compose.yaml', COMPOSE, undefined)).not.toThrow();
    const r = await driver.createOrAdoptGroup(groupSpec(project, composeFolder(COMPOSE)));
    const main = r.group.services.main!;
    const db = r.group.services.db!;
    expect((await capEff(main)) >> CAP_SYS_PTRACE & 1n).toBe(1n);
    expect((await capEff(db)) >> CAP_SYS_PTRACE & 1n).toBe(0n);
    // ptrace-mode read of another uid's process: main may, a service without the capability may not.
    expect((await sh(main, READ_OTHER_ENVIRON)).stdout).toContain('SECRET_OF_NOBODY=42');
    expect((await sh(db, READ_OTHER_ENVIRON)).exitCode).not.toBe(0);
    expect((await sh(main, "awk '/^Seccomp:/ {print $2}' /proc/self/status")).stdout.trim()).toBe('0');
    expect((await sh(db, "awk '/^Seccomp:/ {print $2}' /proc/self/status")).stdout.trim()).toBe('2');
    // main is on `backend` alone (Compose's rule for a service that names its networks).
    expect((await sh(main, 'getent hosts db')).exitCode).toBe(0);
    expect((await sh(main, 'getent hosts outside')).exitCode).not.toBe(0);
  }, 120_000);
});
