// When a pod's failed image pull ends its seed. The kubelet reads a pull secret from its own cache, which can lag a
// Secret made a moment before the pod (seen under load: the first pull went anonymous and the registry answered
// 401), and it pulls again by itself with a backoff. So with a pull secret, a refused authorization is waited on
// for a grace period; any other pull failure (a missing image, a bad name, a registry that is down) ends it at once.

/** How long an authorization refusal is waited on when the pod has a pull secret (the kubelet's first retries). */
export const AUTH_PULL_GRACE_MS = 45_000;

const PULL_FAILED = /ErrImagePull|ImagePullBackOff|InvalidImageName/;
/** The waiting reasons of a pull that failed and that the kubelet tries again. */
export const PULLING = /ErrImagePull|ImagePullBackOff/;
const AUTH_REFUSED = /401|unauthorized|failed to authorize|authentication required/i;

export interface PullFailureInput {
  /** The container's waiting reason and message. */
  reason: string;
  message: string;
  hasPullSecret: boolean;
  /** ms since the pull was first seen failing. */
  failingForMs: number;
}

/** Whether the pull failure is the seed's end; false while it may still pass (or there is none). */
export function pullFailureIsFinal({ reason, message, hasPullSecret, failingForMs }: PullFailureInput): boolean {
  if (!PULL_FAILED.test(reason)) return false;
  if (hasPullSecret && reason !== 'InvalidImageName' && AUTH_REFUSED.test(message)) return failingForMs >= AUTH_PULL_GRACE_MS;
  return true;
}

/** When each container's pull was first seen failing, over the polls of one pod's start. */
export class PullFailureClock {
  private readonly since = new Map<string, number>();

  /** Notes the containers whose pull is failing now. */
  observe(statuses: ReadonlyArray<{ name: string; state?: { waiting?: { reason?: string } } }>): void {
    for (const st of statuses) if (PULLING.test(st.state?.waiting?.reason ?? '') && !this.since.has(st.name)) this.since.set(st.name, Date.now());
  }

  /** ms since `container`'s pull was first seen failing (0 when it was not). */
  failingForMs(container: string): number {
    const at = this.since.get(container);
    return at === undefined ? 0 : Date.now() - at;
  }
}
