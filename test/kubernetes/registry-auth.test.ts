import Docker from 'dockerode';
import { randomBytes } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { containerName, DockerSandboxProvider, KubernetesSandboxProvider } from '../../src/sandbox/index.ts';
import { pullSecretName } from '../../src/sandbox/kubernetes/pull-secret.ts';
import { RegistryReader } from '../../src/sandbox/kubernetes/registry.ts';
import { startAuthRegistry, type AuthRegistry } from '../helpers/auth-registry.ts';
import { FIRST_BUILD_TIMEOUT_MS, useLocalCluster, type LocalCluster } from '../helpers/kubernetes.ts';
import { waitUntil } from '../helpers/worker-process.ts';

// A registry that needs credentials as [kubernetes].registry (issue 23: registries with credentials): Debian's
// docker-registry started by this file on a port of its own, with htpasswd auth (HTTP basic) and with token auth (a
// bearer token from the realm its challenge names, Distribution's token authentication). The credentials come from a Docker
// config.json's `auths` (or a real credential helper, docker-credential-pass, named in `credHelpers`); the engine pushes with them, the Registry HTTP API is read with them, and pods pull by digest
// with an imagePullSecret Berth makes in their namespace (this file's own, removed at the end).


describe.each(['htpasswd', 'token'] as const)('a registry with credentials (%s auth) on the Kubernetes sandbox (real cluster, real docker-registry)', (mode) => {
  let cluster: LocalCluster;
  let registry: AuthRegistry;
  let provider: KubernetesSandboxProvider;
  const suffix = randomBytes(4).toString('hex');
  const namespace = `berth-regauth-${suffix}`;

  beforeAll(async () => {
    cluster = await useLocalCluster();
    registry = await startAuthRegistry(mode);
    await cluster.core.createNamespace({ body: { metadata: { name: namespace } } });
    // Pods need the namespace's default service account, which the controller-manager makes.
    await waitUntil(() => cluster.core.readNamespacedServiceAccount({ name: 'default', namespace }).then(() => true, () => false), 60_000, 'the default service account');
    provider = new KubernetesSandboxProvider({
      kubeConfig: cluster.kubeConfig, namespace, local: new DockerSandboxProvider(new Docker()), registryHost: registry.host, dockerConfig: registry.dockerConfig,
    });
  }, FIRST_BUILD_TIMEOUT_MS);

  afterAll(async () => {
    await cluster?.core.deleteNamespace({ name: namespace }).catch(() => undefined);
    await registry?.stop();
    await cluster?.release();
  }, 120_000);

  let pinned = '';

  it('refuses an anonymous read, naming the registry and the fix', async () => {
    await expect(new RegistryReader().imageConfiguration(`${registry.host}/berth/berth-base:latest`))
      .rejects.toThrow(new RegExp(`registry ${registry.host.replace(/\./g, '\\.')} refuses anonymous reads of berth/berth-base \\(HTTP 401\\): run \`docker login`));
  });

  it('pushes with the credentials and reads the image back by digest from the registry alone', async () => {
    const config = await provider.images.ensure('berth-base:bookworm');
    expect(config.id).toMatch(new RegExp(`^${registry.host.replace(/\./g, '\\.')}/berth/berth-base@sha256:[0-9a-f]{64}$`));
    pinned = config.id;
    const local = await new Docker().getImage('berth-base:bookworm').inspect();
    // A reader with the credentials (basic auth after the registry's 401) answers the engine's own image id.
    const fresh = new KubernetesSandboxProvider({ kubeConfig: cluster.kubeConfig, namespace, local: new DockerSandboxProvider(new Docker()), registryHost: registry.host, dockerConfig: registry.dockerConfig });
    expect(await fresh.images.config(pinned)).toMatchObject({ id: pinned, user: config.user, workdir: config.workdir });
    expect((await fresh.driver.imageConfiguration(pinned))?.id).toBe(local.Id);
  }, 180_000);

  it('says so when the credentials are wrong', async () => {
    const wrong = join(registry.dockerConfig, '..', 'wrong.json');
    writeFileSync(wrong, JSON.stringify({ auths: { [registry.host]: { auth: Buffer.from(`${registry.username}:nope`).toString('base64') } } }));
    const bad = new KubernetesSandboxProvider({ kubeConfig: cluster.kubeConfig, namespace, local: new DockerSandboxProvider(new Docker()), registryHost: registry.host, dockerConfig: wrong });
    await expect(bad.driver.imageConfiguration(pinned)).rejects.toThrow(/refuses the credentials given for berth\/berth-base \(HTTP 401\)/);
  });

  it('takes the credentials from a real credential helper (docker-credential-pass) named in credHelpers: it pushes and reads with them', async () => {
    // pass keeps the secret gpg-encrypted in a store of this test's own, under a key made without a passphrase.
    const saved = { GNUPGHOME: process.env.GNUPGHOME, PASSWORD_STORE_DIR: process.env.PASSWORD_STORE_DIR };
    const gnupg = mkdtempSync(join(tmpdir(), 'berth-gnupg-'));
    chmodSync(gnupg, 0o700);
    Object.assign(process.env, { GNUPGHOME: gnupg, PASSWORD_STORE_DIR: mkdtempSync(join(tmpdir(), 'berth-pass-')) });
    try {
      execFileSync('gpg', ['--batch', '--pinentry-mode', 'loopback', '--passphrase', '', '--quick-gen-key', 'Berth Test <berth-test@example.invalid>', 'default', 'default', 'never'], { stdio: 'ignore' });
      const fpr = execFileSync('gpg', ['--list-keys', '--with-colons'], { encoding: 'utf8' }).split('\n').find((l) => l.startsWith('fpr:'))!.split(':')[9]!;
      execFileSync('pass', ['init', fpr], { stdio: 'ignore' });
      execFileSync('docker-credential-pass', ['store'], { input: JSON.stringify({ ServerURL: registry.host, Username: registry.username, Secret: registry.password }) });
      const config = join(mkdtempSync(join(tmpdir(), 'berth-docker-config-')), 'config.json');
      writeFileSync(config, JSON.stringify({ credHelpers: { [registry.host]: 'pass' } }));
      expect(readFileSync(config, 'utf8')).not.toContain(registry.password);
      const viaHelper = new KubernetesSandboxProvider({ kubeConfig: cluster.kubeConfig, namespace, local: new DockerSandboxProvider(new Docker()), registryHost: registry.host, dockerConfig: config });
      const pushed = await viaHelper.images.ensure('berth-base:bookworm');
      expect(pushed.id).toMatch(new RegExp(`^${registry.host.replace(/\./g, '\\.')}/berth/berth-base@sha256:[0-9a-f]{64}$`));
      expect((await viaHelper.driver.imageConfiguration(pushed.id))?.id).toBe((await new Docker().getImage('berth-base:bookworm').inspect()).Id);
    } finally {
      for (const [k, v] of Object.entries(saved)) if (v === undefined) delete process.env[k]; else process.env[k] = v;
    }
  }, 180_000);

  it('a pod pulls the image by digest with the pull secret Berth made', async () => {
    expect(pinned).not.toBe('');
    const workflowId = `berth/k8s-regauth-${suffix}/pull/1`;
    const name = containerName(workflowId, randomBytes(4).toString('hex'), 'agent');
    const { handle } = await provider.seed({ name, labels: { batch: `k8s-regauth-${suffix}`, workflowId, role: 'agent' }, image: pinned, env: {}, network: 'bridge', workdir: '/app', user: 'root' });
    expect((await provider.exec(handle, { command: 'cat /etc/debian_version' })).exitCode).toBe(0);
    const pod = await cluster.core.readNamespacedPod({ name: handle.containerId, namespace });
    expect(pod.spec?.containers[0]?.image).toBe(pinned);
    expect(pod.spec?.imagePullSecrets).toEqual([{ name: pullSecretName(registry.host) }]);
    const secret = await cluster.core.readNamespacedSecret({ name: pullSecretName(registry.host), namespace });
    expect(secret.type).toBe('kubernetes.io/dockerconfigjson');
    const auths = (JSON.parse(Buffer.from(secret.data!['.dockerconfigjson']!, 'base64').toString('utf8')) as { auths: Record<string, { username: string }> }).auths;
    expect(Object.keys(auths)).toEqual([registry.host]);
    expect(auths[registry.host]!.username).toBe(registry.username);
    await provider.teardown(handle);
  }, 180_000);

  // docs/kubernetes.md (Registries with credentials): [kubernetes] image_pull_secret names a Secret the operator made
  // (`kubectl create secret docker-registry`), so the worker needs no rights on Secrets: pods pull with it and Berth
  // makes none of its own.
  it('a pod pulls with a pull secret made ahead and named in [kubernetes] image_pull_secret; Berth makes none', async () => {
    expect(pinned).not.toBe('');
    const own = `${namespace}-own`;
    await cluster.core.createNamespace({ body: { metadata: { name: own } } });
    try {
      await waitUntil(() => cluster.core.readNamespacedServiceAccount({ name: 'default', namespace: own }).then(() => true, () => false), 60_000, 'the default service account');
      await cluster.core.createNamespacedSecret({ namespace: own, body: {
        metadata: { name: 'regcred' }, type: 'kubernetes.io/dockerconfigjson',
        data: { '.dockerconfigjson': Buffer.from(readFileSync(registry.dockerConfig)).toString('base64') },
      } });
      const named = new KubernetesSandboxProvider({
        kubeConfig: cluster.kubeConfig, namespace: own, local: new DockerSandboxProvider(new Docker()), registryHost: registry.host, dockerConfig: registry.dockerConfig, imagePullSecret: 'regcred',
      });
      const workflowId = `berth/k8s-regauth-${suffix}/named/1`;
      const name = containerName(workflowId, randomBytes(4).toString('hex'), 'agent');
      const { handle } = await named.seed({ name, labels: { batch: `k8s-regauth-${suffix}`, workflowId, role: 'agent' }, image: pinned, env: {}, network: 'bridge', workdir: '/app', user: 'root' });
      expect((await named.exec(handle, { command: 'cat /etc/debian_version' })).exitCode).toBe(0);
      const pod = await cluster.core.readNamespacedPod({ name: handle.containerId, namespace: own });
      expect(pod.spec?.imagePullSecrets).toEqual([{ name: 'regcred' }]);
      expect((await cluster.core.listNamespacedSecret({ namespace: own })).items.map((x) => x.metadata?.name).filter((n) => n?.startsWith('berth-'))).toEqual([]);
      await named.teardown(handle);
    } finally {
      await cluster.core.deleteNamespace({ name: own }).catch(() => undefined);
    }
  }, 180_000);
});
