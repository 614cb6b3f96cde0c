// The imagePullSecret pods get when the registry needs credentials: a `kubernetes.io/dockerconfigjson` Secret of
// Berth's in the sandboxes' namespace holding only that registry's entry, made (or brought up to date) before the
// first pod, named after the registry so several workers share it.
import { CoreV1Api, type KubeConfig, type V1Secret } from '@kubernetes/client-node';
import { createHash } from 'node:crypto';
import type { RegistryCredentials } from '../registry-auth.ts';

export function pullSecretName(registryHost: string): string {
  return `berth-registry-${createHash('sha256').update(registryHost).digest('hex').slice(0, 12)}`;
}

/** The Secret: `.dockerconfigjson` with `auths[host]` as `docker login` writes it. */
export function pullSecret(registryHost: string, creds: RegistryCredentials): V1Secret {
  const auth = Buffer.from(`${creds.username}:${creds.password}`).toString('base64');
  const config = JSON.stringify({ auths: { [registryHost]: { username: creds.username, password: creds.password, auth } } });
  return {
    metadata: { name: pullSecretName(registryHost), labels: { 'berth.pull-secret': '1' }, annotations: { 'berth.registry': registryHost } },
    type: 'kubernetes.io/dockerconfigjson',
    data: { '.dockerconfigjson': Buffer.from(config).toString('base64') },
  };
}

/** Creates the Secret, or replaces it when it differs (credentials rotated); answers its name. */
export async function ensurePullSecret(kc: KubeConfig, namespace: string, registryHost: string, creds: RegistryCredentials): Promise<string> {
  const core = kc.makeApiClient(CoreV1Api);
  const body = pullSecret(registryHost, creds);
  const name = body.metadata!.name!;
  try {
    await core.createNamespacedSecret({ namespace, body });
  } catch (err) {
    if ((err as { code?: number }).code !== 409) throw new Error(`cannot make the pull secret ${namespace}/${name} for registry ${registryHost}: ${(err as Error).message}`);
    const existing = await core.readNamespacedSecret({ name, namespace });
    if (existing.data?.['.dockerconfigjson'] !== body.data!['.dockerconfigjson']) await core.replaceNamespacedSecret({ name, namespace, body });
  }
  return name;
}
