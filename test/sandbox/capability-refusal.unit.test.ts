import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { capabilityRefusal, missingCapabilities, type RunNeeds } from '../../src/sandbox/capability-refusal.ts';
import type { DriverCapabilities } from '../../src/sandbox/driver.ts';
import type { Task } from '../../src/task/model.ts';
import { loadTaskSync } from '../../src/task/load.ts';
import { repoRoot } from '../helpers/cli.ts';

// A task needing what the chosen driver does not declare is refused before work, naming the capability and the fix
// (issue 23, "Selecting it"): judged from DriverCapabilities alone.

const hello = loadTaskSync(join(repoRoot, 'examples', 'hello'));
const all: DriverCapabilities = { groups: true, internalNetworks: true, networkSwitching: true, userWithGroup: true, gpus: true, noNetwork: true, allowlist: true, finalState: true, stopStart: true, modelGateway: true };
const none: DriverCapabilities = { groups: false, internalNetworks: false, networkSwitching: false, userWithGroup: true, gpus: false, noNetwork: false, allowlist: false, finalState: false, stopStart: false, modelGateway: false };

const withModes = (baseline: string, agent: string, verifier: string): Task => ({
  ...hello,
  environment: { ...hello.environment, network_mode: baseline as Task['environment']['network_mode'] },
  agent: { ...hello.agent, network_mode: agent as Task['agent']['network_mode'] },
  verifier: { ...hello.verifier, network_mode: verifier as Task['verifier']['network_mode'] },
});

describe('what a task needs of the driver', () => {
  it.each<[string, Task, RunNeeds, string[]]>([
    ['examples/hello needs nothing special', hello, {}, []],
    ['a Compose task needs groups', { ...hello, compose: {} as NonNullable<Task['compose']> }, {}, ['groups']],
    ['a Compose task with a no-network verifier needs a network of its own for its services', { ...withModes('public', 'public', 'no-network'), compose: {} as NonNullable<Task['compose']> }, {}, ['groups', 'noNetwork', 'networkSwitching', 'internalNetworks']],
    ['no-network everywhere', withModes('no-network', 'no-network', 'no-network'), {}, ['noNetwork']],
    ['allowlist for the agent only', withModes('public', 'allowlist', 'public'), {}, ['allowlist', 'networkSwitching']],
    ['a verifier without network', withModes('public', 'public', 'no-network'), {}, ['noNetwork', 'networkSwitching']],
    ['--keep-final-state', hello, { keepFinalState: true }, ['finalState']],
    ['an agent installed in the sandbox reaches the model gateway', hello, { agentInSandbox: 'claude-code' }, ['modelGateway']],
    ['a separate verifier stops the agent\'s sandbox', { ...hello, verifier: { ...hello.verifier, mode: 'separate' } }, {}, ['stopStart']],
    // Task Folder Format § Environment: `gpus`.
    ['GPUs for the agent\'s sandbox', { ...hello, environment: { ...hello.environment, gpus: 1 } }, {}, ['gpus']],
    ['GPUs for a separate verifier only', { ...hello, verifier: { ...hello.verifier, mode: 'separate', environment: { ...hello.environment, gpus: 2 } } }, {}, ['stopStart', 'gpus']],
  ])('%s', (_what, task, run, want) => {
    expect(missingCapabilities(task, none, run).map((m) => m.capability)).toEqual(want);
    expect(missingCapabilities(task, all, run)).toEqual([]);
  });

  it('names the task, the capability, why, and the fix', () => {
    const message = capabilityRefusal(withModes('public', 'public', 'no-network'), none, 'kubernetes');
    expect(message).toContain(`task ${hello.id}`);
    expect(message).toMatch(/noNetwork \(a phase has network_mode = "no-network"\)/);
    expect(message).toMatch(/run it with the Docker sandbox \(--sandbox docker\)$/);
    expect(capabilityRefusal(hello, none, 'kubernetes')).toBeNull();
  });

  it('names the GPUs a task asks for', () => {
    const message = capabilityRefusal({ ...hello, environment: { ...hello.environment, gpus: 1 } }, none, 'future');
    expect(message).toMatch(/the future sandbox cannot do: gpus \(\[environment\]\.gpus = 1 ask for GPUs\)/);
  });
});
