// An image of this engine pushed to a registry (docker tag, then docker push), answered as the reference a pod
// pulls by digest. The engine wants an X-Registry-Auth header even for a registry without auth: an empty one then.
import type Docker from 'dockerode';
import { ENGINE } from '../errors.ts';
import { asSandboxError } from './loss.ts';
import type { RegistryCredentials } from '../registry-auth.ts';

interface PushMessage {
  error?: string;
  aux?: { Digest?: string };
}

/** Tags `ref` as `repository:tag`, pushes it, and answers `repository@sha256:…` (the manifest digest the registry holds). */
export async function pushImage(docker: Docker, ref: string, repository: string, tag: string, credentials?: RegistryCredentials | null): Promise<string> {
  const registry = repository.slice(0, repository.indexOf('/'));
  let out: PushMessage[];
  try {
    await docker.getImage(ref).tag({ repo: repository, tag });
    const stream = await docker.getImage(`${repository}:${tag}`).push({ authconfig: { username: credentials?.username ?? '', password: credentials?.password ?? '', serveraddress: registry } });
    out = await new Promise<PushMessage[]>((resolve, reject) => docker.modem.followProgress(stream, (err, o) => (err ? reject(err) : resolve((o ?? []) as PushMessage[]))));
  } catch (err) {
    throw asSandboxError(ENGINE, err);
  }
  const failed = out.find((m) => m.error);
  const digest = out.find((m) => m.aux?.Digest)?.aux?.Digest;
  if (failed || !digest) {
    throw new Error(`pushing ${ref} to ${repository}:${tag} failed: ${failed?.error ?? 'the engine reported no digest'}; is the registry ${registry} up ([kubernetes].registry)?`);
  }
  return `${repository}@${digest}`;
}
