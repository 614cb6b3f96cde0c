// berth.toml read once per version of the file (docs/design.md section 2: src/config, read once).
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadBerthConfig } from '../../src/config/index.ts';

describe('loadBerthConfig', () => {
  it('returns the same values while the file is unchanged, and the new ones once it changes', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'berth-config-')), 'berth.toml');
    writeFileSync(file, '[worker]\nslots = 3\n');
    const first = loadBerthConfig(file);
    expect(first.config.worker.slots).toBe(3);
    // A caller that changes what it was handed does not change what the next caller gets.
    (first.config.worker as { slots?: number }).slots = 99;
    expect(loadBerthConfig(file).config.worker.slots).toBe(3);
    writeFileSync(file, '[worker]\nslots = 12\n');
    expect(loadBerthConfig(file).config.worker.slots).toBe(12);
  });

  it('still refuses a file that turned invalid, naming it', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'berth-config-')), 'berth.toml');
    writeFileSync(file, '[worker]\nslots = 2\n');
    loadBerthConfig(file);
    writeFileSync(file, '[worker]\nslots = "many"\n');
    expect(() => loadBerthConfig(file)).toThrow(`${file}: key worker.slots`);
  });

  // issue 23, "Selecting it": [sandbox] provider and [kubernetes] settings.
  it.each([
    ['', { provider: 'docker' }, {}],
    ['[sandbox]\nprovider = "kubernetes"\n[kubernetes]\nregistry = "127.0.0.1:5050"\nnamespace = "evals"\nkubeconfig = "/etc/k"\n',
      { provider: 'kubernetes' }, { registry: '127.0.0.1:5050', namespace: 'evals', kubeconfig: '/etc/k' }],
    ['[kubernetes]\nmax_pods = 8\n', { provider: 'docker' }, { max_pods: 8 }],
    // docs/kubernetes.md (Registries with credentials, Network per phase): the settings a deployment gives the driver.
    ['[kubernetes]\nimage_pull_secret = "regcred"\negress_address = "10.0.0.5"\nnetwork_policies = true\n', { provider: 'docker' },
      { image_pull_secret: 'regcred', egress_address: '10.0.0.5', network_policies: true }],
    ['[kubernetes]\negress_address = "fd00::5"\n', { provider: 'docker' }, { egress_address: 'fd00::5' }],
  ])('reads the sandbox provider and [kubernetes] from %j', (text, sandbox, kubernetes) => {
    const file = join(mkdtempSync(join(tmpdir(), 'berth-config-')), 'berth.toml');
    writeFileSync(file, text);
    const { config } = loadBerthConfig(file);
    expect(config.sandbox).toEqual(sandbox);
    expect(config.kubernetes).toEqual(kubernetes);
  });

  it.each([
    ['[sandbox]\nprovider = "podman"\n', 'key sandbox.provider'],
    ['[sandbox]\nprovider = "kubernetes"\n', 'key kubernetes.registry: [sandbox] provider = "kubernetes" needs the registry'],
    ['[kubernetes]\nregistry = "http://r:5000"\n', 'key kubernetes.registry: expected host[:port][/prefix]'],
    ['[kubernetes]\nnamespace = "Evals"\n', 'key kubernetes.namespace: expected a namespace name'],
    ['[kubernetes]\ncontext = "x"\n', 'key kubernetes'],
    // issue 23, "Scheduling and slots": [kubernetes].max_pods bounds a batch's pods; checked when read.
    ['[kubernetes]\nmax_pods = 0\n', 'key kubernetes.max_pods: expected at least 1 pod'],
    ['[kubernetes]\nmax_pods = 2.5\n', 'key kubernetes.max_pods: expected a whole number of pods'],
    ['[kubernetes]\nmax_pods = "32"\n', 'key kubernetes.max_pods: expected a whole number of pods of at least 1'],
    ['[kubernetes]\negress_address = "worker.local"\n', 'key kubernetes.egress_address: expected an IP address pods reach the worker at'],
    ['[kubernetes]\nnetwork_policies = "yes"\n', 'key kubernetes.network_policies: expected true or false'],
    ['[kubernetes]\nimage_pull_secret = "Reg_Cred"\n', 'key kubernetes.image_pull_secret: expected the name of a Secret'],
  ])('refuses %j naming the file and the key', (text, want) => {
    const file = join(mkdtempSync(join(tmpdir(), 'berth-config-')), 'berth.toml');
    writeFileSync(file, text);
    expect(() => loadBerthConfig(file)).toThrow(`${file}: ${want}`);
  });
});
