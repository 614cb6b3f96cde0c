// Network policies per phase, as Harbor resolves them (Harbor 0.25 and § 2.4, Network
// policy; Harbor's trial/network_policy.py): the loader hands out each phase's effective policy.
import { describe, expect, it } from 'vitest';
import { agentSandboxNetworking, normaliseAllowedHost, phasePolicyFor } from '../../src/task/network.ts';
import { build, expectTask } from './helpers.ts';

describe('allowed_hosts entries (Harbor 0.25: host, *.host, IP, CIDR; no URLs or ports)', () => {
  it.each([
    ['Example.COM.', 'example.com'],
    ['*.Example.com', '*.example.com'],
    ['10.0.0.7', '10.0.0.7'],
    ['10.0.0.0/8', '10.0.0.0/8'],
    ['172.17.0.0/16', '172.17.0.0/16'],
    ['2001:DB8::1', '2001:db8::1'],
    ['localhost', 'localhost'],
  ])('%s → %s', (raw, want) => {
    expect(normaliseAllowedHost(raw)).toEqual({ ok: true, host: want });
  });

  it.each(['https://example.com', 'example.com:443', 'example.com/path', '*', 'a.*.com', '*.10.0.0.1', '10.0.0.1/8', '10.0.0.0/33', '', 'under_score.com'])('%j is refused', (raw) => {
    expect(normaliseAllowedHost(raw).ok).toBe(false);
  });
});

const phases = (toml: string) => {
  const t = expectTask(build({ 'task.toml': toml, 'tests/Dockerfile': 'FROM v' }));
  return { agent: t.agent.network_mode, verifier: t.verifier.network_mode, hosts: [t.agent.allowed_hosts, t.verifier.allowed_hosts] };
};

describe('single-step phases: a phase\'s own table, else its sandbox\'s baseline (trial/network_policy.py)', () => {
  const rows: Array<[string, string, string, string]> = [
    ['nothing set: public everywhere', '', 'public', 'public'],
    ['the environment\'s mode is every phase\'s baseline', '[environment]\nnetwork_mode = "no-network"\n', 'no-network', 'no-network'],
    ['[agent] overrides for the agent phase only', '[agent]\nnetwork_mode = "no-network"\n', 'no-network', 'public'],
    ['[verifier] overrides for a shared verifier phase', '[environment]\nnetwork_mode = "no-network"\n[verifier]\nnetwork_mode = "public"\n', 'no-network', 'public'],
    ['a separate verifier\'s baseline is its own environment\'s', '[verifier.environment]\nnetwork_mode = "no-network"\n', 'public', 'no-network'],
    ['a mode-only separate verifier copies [environment]\'s', '[environment]\nnetwork_mode = "no-network"\n[verifier]\nenvironment_mode = "separate"\n', 'no-network', 'no-network'],
    ['[verifier] overrides a separate verifier\'s baseline too', '[verifier]\nnetwork_mode = "no-network"\n[verifier.environment]\nnetwork_mode = "public"\n', 'public', 'no-network'],
  ];
  it.each(rows)('%s', (_name, toml, agent, verifier) => {
    const p = phases(toml);
    expect([p.agent, p.verifier]).toEqual([agent, verifier]);
  });

  it('an allowlist carries its normalised hosts; a phase override replaces them', () => {
    const p = phases('[environment]\nnetwork_mode = "allowlist"\nallowed_hosts = ["A.com", "a.com", "10.1.0.0/16"]\n[verifier]\nnetwork_mode = "allowlist"\nallowed_hosts = []\n');
    expect(p.agent).toBe('allowlist');
    expect(p.hosts).toEqual([['a.com', '10.1.0.0/16'], []]);
  });
});

describe('step phases: the step\'s table, else the task\'s phase table, else the baseline', () => {
  const toml = [
    '[environment]', 'network_mode = "public"',
    '[agent]', 'network_mode = "no-network"',
    '[[steps]]', 'name = "a"', '[steps.agent]', 'network_mode = "public"', '[steps.verifier]', 'network_mode = "no-network"',
    '[[steps]]', 'name = "b"',
    '[[steps]]', 'name = "c"', '[steps.verifier]', 'network_mode = "allowlist"', 'allowed_hosts = ["*.pypi.org"]',
    '[steps.verifier.environment]', 'docker_image = "v"', 'network_mode = "no-network"',
  ].join('\n');
  const files = { 'task.toml': toml, 'tests/test.sh': 'x', 'steps/a/instruction.md': 'a', 'steps/b/instruction.md': 'b', 'steps/c/instruction.md': 'c' };

  it('agent and verifier phase of each step', () => {
    const t = expectTask(build(files));
    expect(t.steps.map((s) => [s.agent.network_mode, s.verifier.network_mode])).toEqual([
      ['public', 'no-network'],
      ['no-network', 'public'],
      ['no-network', 'allowlist'],
    ]);
    expect(t.steps[2]!.verifier.allowed_hosts).toEqual(['*.pypi.org']);
    expect(t.steps[2]!.verifier.environment!.network_mode).toBe('no-network');
  });

  it('the corpus task network-policy-dynamic-steps-mixed resolves as Harbor\'s', () => {
    const t = expectTask(build({
      'task.toml': '[environment]\nnetwork_mode = "public"\n[[steps]]\nname = "x"\n[steps.agent]\nnetwork_mode = "public"\n[steps.verifier]\nnetwork_mode = "no-network"\n[[steps]]\nname = "y"\n[steps.agent]\nnetwork_mode = "no-network"\n[steps.verifier]\nnetwork_mode = "public"\n',
      'steps/x/instruction.md': 'x', 'steps/x/tests/test.sh': 'x', 'steps/y/instruction.md': 'y', 'steps/y/tests/test.sh': 'y',
    }));
    expect(t.steps.map((s) => [s.agent.network_mode, s.verifier.network_mode])).toEqual([['public', 'no-network'], ['no-network', 'public']]);
  });
});

// docs/departures.md, Network (installed agents keep their model gateway; after Harbor's --allow-agent-host).
describe('the phases of an agent that calls its model from inside the sandbox', () => {
  const rows: Array<[string, string, boolean, { agent: string; verifier: string; switching: boolean; egress: boolean }]> = [
    ['a no-network agent phase admits nothing on the egress network', '[agent]\nnetwork_mode = "no-network"\n', true,
      { agent: 'allowlist', verifier: 'public', switching: true, egress: true }],
    ['the same phase for an agent whose model calls leave from the worker stays no-network', '[agent]\nnetwork_mode = "no-network"\n', false,
      { agent: 'no-network', verifier: 'public', switching: true, egress: false }],
    ['an offline environment: only the agent phase changes, so the sandbox switches', '[environment]\nnetwork_mode = "no-network"\n', true,
      { agent: 'allowlist', verifier: 'no-network', switching: true, egress: true }],
    ['an offline environment never switches for the other agents', '[environment]\nnetwork_mode = "no-network"\n', false,
      { agent: 'no-network', verifier: 'no-network', switching: false, egress: false }],
    ['a public task is unchanged', '', true, { agent: 'public', verifier: 'public', switching: false, egress: false }],
  ];
  it.each(rows)('%s', (_name, toml, inSandbox, want) => {
    const t = expectTask(build({ 'task.toml': toml, 'tests/Dockerfile': 'FROM v' }));
    const agent = phasePolicyFor(t, 0, 'agent', inSandbox);
    expect({ agent: agent.network_mode, verifier: phasePolicyFor(t, 0, 'verifier', inSandbox).network_mode, ...agentSandboxNetworking(t, inSandbox) }).toEqual(want);
    if (agent.network_mode === 'allowlist' && want.agent !== t.agent.network_mode) expect(agent.allowed_hosts).toEqual([]);
  });

  it('an allowlist agent phase keeps its own hosts', () => {
    const t = expectTask(build({ 'task.toml': '[agent]\nnetwork_mode = "allowlist"\nallowed_hosts = ["a.com"]\n', 'tests/Dockerfile': 'FROM v' }));
    expect(phasePolicyFor(t, 0, 'agent', true)).toEqual({ network_mode: 'allowlist', allowed_hosts: ['a.com'] });
  });
});
