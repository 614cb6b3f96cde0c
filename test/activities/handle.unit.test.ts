// Sandbox references in workflow history (docs/design.md section 2: workflow types speak of sandboxes and services).
import { describe, expect, it } from 'vitest';
import { handleOf, servicesOf } from '../../src/host/handle.ts';
import type { SandboxRef } from '../../src/workflows/types.ts';

const base = { queue: 'q', host: 'h', user: 'agent', workdir: '/app', logsDir: '/logs' };

describe('handleOf and servicesOf', () => {
  it('read a sandbox and its services by name and id', () => {
    const ref: SandboxRef = { ...base, name: 'berth-x-agent', id: 'abc', group: { project: 'p', services: { api: { name: 'p-api-1', id: 'def', user: 'root', workdir: '/' } } } };
    expect(handleOf(ref)).toEqual({ name: 'berth-x-agent', containerId: 'abc', user: 'agent', workdir: '/app' });
    expect(servicesOf(ref)).toEqual({ api: { name: 'p-api-1', containerId: 'def', user: 'root', workdir: '/' } });
  });

  it('still read what an episode started before the rename kept in its history (container, containerId)', () => {
    const old = { ...base, container: 'berth-y-agent', containerId: '123', group: { project: 'p', services: { db: { container: 'p-db-1', containerId: '456', user: 'root', workdir: '/' } } } };
    expect(handleOf(old as unknown as SandboxRef)).toEqual({ name: 'berth-y-agent', containerId: '123', user: 'agent', workdir: '/app' });
    expect(servicesOf(old as unknown as SandboxRef)).toEqual({ db: { name: 'p-db-1', containerId: '456', user: 'root', workdir: '/' } });
  });
});
