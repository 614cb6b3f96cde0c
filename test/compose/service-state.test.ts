// When a group is up: `docker compose up --wait`'s rule, applied by Berth through the Engine API.
import type Docker from 'dockerode';
import { describe, expect, it } from 'vitest';
import { serviceState } from '../../src/sandbox/docker/compose-group.ts';

const st = (s: Partial<Docker.ContainerInspectInfo['State']> & { health?: string }): Docker.ContainerInspectInfo['State'] =>
  ({ Running: false, Status: 'exited', ExitCode: 0, ...s, ...(s.health ? { Health: { Status: s.health } } : {}) }) as Docker.ContainerInspectInfo['State'];

describe('serviceState', () => {
  it.each([
    ['a running sidecar without a healthcheck', 'db', st({ Running: true, Status: 'running' }), 'ready'],
    ['a sidecar still starting its healthcheck', 'db', st({ Running: true, Status: 'running', health: 'starting' }), 'waiting'],
    ['a healthy sidecar', 'db', st({ Running: true, Status: 'running', health: 'healthy' }), 'ready'],
    ['an unhealthy sidecar', 'db', st({ Running: true, Status: 'running', health: 'unhealthy' }), 'failed'],
    ['a one-shot sidecar that completed', 'init', st({ ExitCode: 0 }), 'ready'],
    ['a sidecar that died', 'db', st({ ExitCode: 3 }), 'failed'],
    ['a container created, not started yet', 'db', st({ Status: 'created' }), 'waiting'],
    ['main running, whatever its placeholder healthcheck says', 'main', st({ Running: true, Status: 'running', health: 'starting' }), 'ready'],
    ['main that exited, even with 0', 'main', st({ ExitCode: 0 }), 'failed'],
  ] as const)('%s: %s', (_what, service, state, want) => {
    expect(serviceState(service, state)).toBe(want);
  });

  // Issue 22: main's own Compose healthcheck is awaited once Berth has seeded main (as `up --wait` awaits it).
  it.each([
    ['main seeded, its healthcheck starting', st({ Running: true, Status: 'running', health: 'starting' }), 'waiting'],
    ['main seeded and healthy', st({ Running: true, Status: 'running', health: 'healthy' }), 'ready'],
    ['main seeded, unhealthy while it was seeded: it may still turn healthy', st({ Running: true, Status: 'running', health: 'unhealthy' }), 'waiting'],
    ['main seeded, no healthcheck', st({ Running: true, Status: 'running' }), 'ready'],
  ] as const)('%s', (_what, state, want) => {
    expect(serviceState('main', state, true)).toBe(want);
  });
});
