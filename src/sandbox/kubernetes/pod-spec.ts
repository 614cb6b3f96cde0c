// Pure rules of the Kubernetes driver: a pod's name from a Berth sandbox name, the pod a single sandbox becomes,
// and the argv an exec runs (the exec API has no user, working directory or environment of its own).
import type { V1Pod } from '@kubernetes/client-node';
import { createHash } from 'node:crypto';
import type { SingleSandboxSpec } from '../driver.ts';
import { envList, withTimeout, type RawExecOptions } from '../exec.ts';
import { LABEL_BATCH, LABEL_ROLE, LABEL_USER, LABEL_WORKDIR, LABEL_WORKFLOW } from '../names.ts';
import type { SandboxHandle } from '../types.ts';

/** Every pod the driver makes carries this label; Berth's own labels are annotations (their values are free text). */
export const MANAGED_LABEL = 'berth.sandbox';
/** The Berth sandbox name a pod stands for (pod names are DNS labels; Berth names may have capitals and dots). */
export const ANNOTATION_NAME = 'berth.name';
export const CONTAINER = 'main';
const POD_NAME_MAX = 63;

/** A DNS-1123 label for a sandbox name: itself when it already is one, else lowercased and cleaned, with a hash of the original. */
export function podName(name: string): string {
  if (/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/.test(name)) return name;
  const hash = createHash('sha256').update(name).digest('hex').slice(0, 10);
  const readable = name.toLowerCase().replace(/[^a-z0-9-]+/g, '-').replace(/^-+/, '').slice(0, POD_NAME_MAX - hash.length - 1).replace(/-+$/, '');
  return readable ? `${readable}-${hash}` : `s-${hash}`;
}

/** The pod of a single sandbox: the keep-alive as its command as root, env, limits, Berth's labels as annotations. */
export function singlePod(spec: SingleSandboxSpec): V1Pod {
  const limits: Record<string, string> = {};
  if (spec.cpus) limits.cpu = `${Math.round(spec.cpus * 1000)}m`;
  if (spec.memoryMb) limits.memory = `${spec.memoryMb}Mi`;
  if (spec.gpus) limits['nvidia.com/gpu'] = String(spec.gpus);
  return {
    metadata: {
      name: podName(spec.name),
      labels: { [MANAGED_LABEL]: 'single' },
      annotations: {
        [ANNOTATION_NAME]: spec.name,
        [LABEL_BATCH]: spec.labels.batch,
        [LABEL_WORKFLOW]: spec.labels.workflowId,
        [LABEL_ROLE]: spec.labels.role,
        [LABEL_USER]: spec.user,
        [LABEL_WORKDIR]: spec.workdir,
      },
    },
    spec: {
      restartPolicy: 'Never',
      // The sandbox's processes are Berth's to end: removal need not wait for them.
      terminationGracePeriodSeconds: 0,
      automountServiceAccountToken: false,
      enableServiceLinks: false,
      // As Docker's Init: true, something reaps orphans: the pod's pause process, with a shared PID namespace.
      shareProcessNamespace: true,
      containers: [{
        name: CONTAINER,
        image: spec.image,
        imagePullPolicy: 'IfNotPresent',
        command: [...spec.keepAlive],
        args: [],
        env: Object.entries(spec.env).map(([name, value]) => ({ name, value })),
        securityContext: { runAsUser: 0, runAsGroup: 0 },
        resources: Object.keys(limits).length > 0 ? { limits, requests: limits } : undefined,
      }],
    },
  };
}

/**
 * The argv an exec runs in the container: the budget (`timeout`, as on Docker), then the environment and working
 * directory through coreutils `env`, then the user through util-linux `runuser` when it is not root.
 */
export function execArgv(handle: SandboxHandle, options: RawExecOptions): string[] {
  const user = options.user ?? handle.user;
  const workdir = options.workdir ?? handle.workdir;
  const inner = withTimeout(options.argv, options.timeoutSec);
  const withEnv = ['env', '-C', workdir, ...(envList(options.env) ?? []), ...inner];
  if (user === 'root' || user === '0' || user === '0:0' || user === '') return withEnv;
  const [name, group] = user.split(':');
  return ['runuser', '-u', name!, ...(group ? ['-g', group] : []), '--', ...withEnv];
}
