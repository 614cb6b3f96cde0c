import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { hostProvider } from '../../src/host/deps.ts';
import { KubernetesSandboxProvider } from '../../src/sandbox/index.ts';

// [sandbox] provider, or `--sandbox` per worker, picks the worker's sandbox (issue 23, "Selecting it";
// docs/kubernetes.md, settings). No engine or cluster is called to build a provider.

const saved = process.env.BERTH_CONFIG;
afterEach(() => {
  if (saved === undefined) delete process.env.BERTH_CONFIG; else process.env.BERTH_CONFIG = saved;
});

function configWith(text: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'berth-config-'));
  const kubeconfig = join(dir, 'kubeconfig');
  writeFileSync(kubeconfig, [
    'apiVersion: v1', 'kind: Config', 'current-context: c',
    'clusters: [{name: k, cluster: {server: "https://127.0.0.1:1"}}]', 'users: [{name: u, user: {token: t}}]',
    'contexts: [{name: c, context: {cluster: k, user: u, namespace: from-context}}]', '',
  ].join('\n'));
  const file = join(dir, 'berth.toml');
  writeFileSync(file, text.replace('KUBECONFIG', kubeconfig));
  process.env.BERTH_CONFIG = file;
  return file;
}

describe('the worker\'s sandbox from berth.toml and --sandbox', () => {
  it('builds the Kubernetes provider for provider = "kubernetes", with the registry and namespace of [kubernetes]', () => {
    configWith('[sandbox]\nprovider = "kubernetes"\n[kubernetes]\nregistry = "127.0.0.1:5050"\nnamespace = "evals"\nkubeconfig = "KUBECONFIG"\n');
    const provider = hostProvider();
    expect(provider).toBeInstanceOf(KubernetesSandboxProvider);
    expect(provider.driver.sandbox).toBe('kubernetes');
    expect((provider as KubernetesSandboxProvider).driver.namespace).toBe('evals');
    expect((provider as KubernetesSandboxProvider).images.registry).toBe('127.0.0.1:5050');
  });

  it('takes the kubeconfig context\'s namespace when [kubernetes] names none', () => {
    configWith('[sandbox]\nprovider = "kubernetes"\n[kubernetes]\nregistry = "127.0.0.1:5050"\nkubeconfig = "KUBECONFIG"\n');
    expect((hostProvider() as KubernetesSandboxProvider).driver.namespace).toBe('from-context');
  });

  it('--sandbox overrides the file both ways', () => {
    configWith('[sandbox]\nprovider = "kubernetes"\n[kubernetes]\nregistry = "127.0.0.1:5050"\nkubeconfig = "KUBECONFIG"\n');
    expect(hostProvider('docker').driver.sandbox).toBe('docker');
    configWith('[kubernetes]\nregistry = "127.0.0.1:5050"\nkubeconfig = "KUBECONFIG"\n');
    expect(hostProvider('kubernetes').driver.sandbox).toBe('kubernetes');
  });

  it('refuses --sandbox kubernetes without [kubernetes].registry, naming the file, the key and the fix', () => {
    const file = configWith('[worker]\nslots = 2\n');
    expect(() => hostProvider('kubernetes')).toThrow(`${file}: key kubernetes.registry: the kubernetes sandbox (--sandbox kubernetes) needs the registry`);
    expect(() => hostProvider('kubernetes')).toThrow(/Add \[kubernetes\] registry = "host:port"/);
  });

  it('builds the Docker provider for provider = "docker" (no engine call)', () => {
    configWith('[sandbox]\nprovider = "docker"\n');
    expect(hostProvider().driver.sandbox).toBe('docker');
  });
});
