// Pure rules of the Kubernetes driver: a pod's name from a Berth sandbox name, the pod a single sandbox becomes,
// and the argv an exec runs (the exec API has no user, working directory or environment of its own).
import type { V1ObjectMeta, V1Pod, V1PodSpec } from '@kubernetes/client-node';
import { createHash } from 'node:crypto';
import type { SingleSandboxSpec } from '../driver.ts';
import { envList, withTimeout, type RawExecOptions } from '../exec.ts';
import { LABEL_BATCH, LABEL_ROLE, LABEL_USER, LABEL_WORKDIR, LABEL_WORKFLOW } from '../names.ts';
import { KEEP_ALIVE_TAIL, keepAliveBefore } from '../seed-scripts.ts';
import { CHANNEL_DIR, CHANNEL_ENDED, CHANNEL_LOOP, CHANNEL_PROCESS } from '../channel-protocol.ts';
import { shellQuote } from '../names.ts';
import type { SandboxHandle, SandboxLabels } from '../types.ts';

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

export interface PodBase {
  podName: string;
  kind: 'single' | 'group';
  /** The Berth sandbox (or group project) name. */
  name: string;
  labels: SandboxLabels;
  /** main's user and working directory, for exec. */
  user: string;
  workdir: string;
  /** More annotations (a group's services). */
  annotations?: Record<string, string>;
}

/** What every pod of Berth's has: its labels as annotations, no restarts, removed at once, no token, orphans reaped. */
export function podBase(b: PodBase): { metadata: V1ObjectMeta; spec: Omit<V1PodSpec, 'containers'> } {
  return {
    metadata: {
      name: b.podName,
      labels: { [MANAGED_LABEL]: b.kind },
      annotations: {
        [ANNOTATION_NAME]: b.name,
        ...b.annotations,
        [LABEL_BATCH]: b.labels.batch,
        [LABEL_WORKFLOW]: b.labels.workflowId,
        [LABEL_ROLE]: b.labels.role,
        [LABEL_USER]: b.user,
        [LABEL_WORKDIR]: b.workdir,
      },
    },
    spec: {
      restartPolicy: 'Never',
      // The sandbox's processes are Berth's to end: removal need not wait for them.
      terminationGracePeriodSeconds: 0,
      automountServiceAccountToken: false,
      enableServiceLinks: false,
      // As Docker's Init: true, something reaps orphans: the pod's pause process, with a shared PID namespace (a
      // single sandbox's keep-alive reaps them itself: reapingKeepAlive).
      shareProcessNamespace: true,
    },
  };
}

/** A `sleep infinity` started again whenever it ends, waited on by the shell, which so reaps every orphan too. */
const REAPING_TAIL = '{ set +e; while :; do sleep infinity & wait $!; done; }';

/**
 * The keep-alive as the container's init: a shell keep-alive that ends in `exec sleep infinity` instead keeps a
 * `sleep infinity` child running (started again if something ends it) and waits on it, which reaps the orphans
 * reparented to it as Docker's Init does; null for any other keep-alive. Without this the pod needs a shared PID
 * namespace for its pause process to reap, and that namespace costs the node (docs/kubernetes.md, issue 40, the
 * node's side: about a tenth of the wall time of 32 pods at once).
 */
export function reapingKeepAlive(keepAlive: readonly string[]): string[] | null {
  const head = keepAliveBefore(keepAlive, KEEP_ALIVE_TAIL, ['sh', '/bin/sh']);
  // `set +e`: a keep-alive under `set -e` must not end when `wait` answers a signal.
  return head === null ? null : [keepAlive[0]!, '-c', `${head}${REAPING_TAIL}`];
}

/**
 * reapingKeepAlive that also serves requests on the container's stdin (pod-channel.ts): once the setup is done, the
 * request loop runs beside `sleep infinity` while the init waits on it, and says so (CHANNEL_ENDED) if something ends
 * it; then the init reaps as above. An image without `tail` or `wc` gets no loop (its commands go through exec). The
 * setup's stdin is /dev/null and the loop's is given it explicitly (an asynchronous command's own would be /dev/null).
 */
export function channelKeepAlive(keepAlive: readonly string[]): string[] | null {
  const head = keepAliveBefore(keepAlive, KEEP_ALIVE_TAIL, ['sh', '/bin/sh']);
  if (head === null) return null;
  // One compound command, so a setup ending in `&&` still ends the keep-alive when it fails.
  const loop = [
    `{ if command -v tail >/dev/null 2>&1 && command -v wc >/dev/null 2>&1 && mkdir -p -m 700 ${CHANNEL_DIR} 2>/dev/null; then`,
    '  set +e; sleep infinity 3<&- &',
    `  /bin/sh -c ${shellQuote(CHANNEL_LOOP)} ${CHANNEL_PROCESS} <&3 3<&- &`,
    `  exec 3<&-; wait $!; echo '${CHANNEL_ENDED}'`,
    'fi',
    'exec 3<&-',
    `${REAPING_TAIL}; }`,
  ].join('\n');
  // The setup reads nothing of the stdin (a request sent before the loop runs waits there for it).
  return [keepAlive[0]!, '-c', `exec 3<&0 </dev/null\n${head}${loop}`];
}

const withoutSharedPids = ({ shareProcessNamespace: _, ...rest }: Omit<V1PodSpec, 'containers'>) => rest;

/** The pod of a single sandbox: the keep-alive (with its request loop) as its command as root, env, limits, Berth's labels as annotations. */
export function singlePod(spec: SingleSandboxSpec, withChannel = true): V1Pod {
  const channel = withChannel ? channelKeepAlive(spec.keepAlive) : null;
  const reaping = channel ?? reapingKeepAlive(spec.keepAlive);
  const limits: Record<string, string> = {};
  if (spec.cpus) limits.cpu = `${Math.round(spec.cpus * 1000)}m`;
  if (spec.memoryMb) limits.memory = `${spec.memoryMb}Mi`;
  if (spec.gpus) limits['nvidia.com/gpu'] = String(spec.gpus);
  const base = podBase({ podName: podName(spec.name), kind: 'single', name: spec.name, labels: spec.labels, user: spec.user, workdir: spec.workdir });
  return {
    metadata: base.metadata,
    spec: {
      ...(reaping ? withoutSharedPids(base.spec) : base.spec),
      containers: [{
        name: CONTAINER,
        image: spec.image,
        imagePullPolicy: 'IfNotPresent',
        command: reaping ?? [...spec.keepAlive],
        args: [],
        // The request loop reads the container's stdin, kept open across attaches.
        ...(channel ? { stdin: true, stdinOnce: false } : {}),
        env: Object.entries(spec.env).map(([name, value]) => ({ name, value })),
        securityContext: { runAsUser: 0, runAsGroup: 0 },
        resources: Object.keys(limits).length > 0 ? { limits, requests: limits } : undefined,
      }],
    },
  };
}

/**
 * A numeric user (`uid` or `uid:gid`) as Docker (runc) resolves it: the passwd entry of that uid, when there is one,
 * gives the primary group and HOME, and the supplementary groups are the /etc/group entries that list its name (with
 * a gid given, that gid is the only group, as on Docker); without one the group is 0, there are none and HOME is `/`. runuser needs a name, so util-linux
 * `setpriv` (beside runuser in every image that has runuser) switches ids after a few lines of sh read the two files
 * (no getent: not in every image).
 */
export const NUMERIC_USER_SCRIPT = [
  'uid=$1 gid=$2; shift 2; name= pgid= home= sgids=',
  'if [ -r /etc/passwd ]; then while IFS=: read -r n _ u g _ h _; do',
  '  if [ "$u" = "$uid" ]; then name=$n pgid=$g home=$h; break; fi',
  'done < /etc/passwd; fi',
  'if [ -n "$name" ] && [ -z "$gid" ] && [ -r /etc/group ]; then while IFS=: read -r _ _ g members; do',
  '  case ",$members," in *",$name,"*) sgids=$sgids${sgids:+,}$g ;; esac',
  'done < /etc/group; fi',
  'groups=--clear-groups; [ -n "$sgids" ] && groups=--groups=$sgids',
  'HOME=${home:-/} exec setpriv --reuid="$uid" --regid="${gid:-${pgid:-0}}" "$groups" -- "$@"',
].join('\n');

/** `uid` or `uid:gid` (both numeric); null for a name. */
export function numericUser(user: string): { uid: string; gid: string } | null {
  const m = /^(\d+)(?::(\d+))?$/.exec(user);
  return m ? { uid: m[1]!, gid: m[2] ?? '' } : null;
}

const isRoot = (user: string) => user === 'root' || user === '0' || user === '0:0' || user === '';

/** The working directory through the shell: busybox's `env` (alpine, busybox images) has no `-C`. 125 as `env -C`'s. */
export const CHDIR_SCRIPT = 'cd -- "$0" || exit 125; exec "$@"';

/**
 * The argv an exec runs in the container: the budget (`timeout`, as on Docker), then the working directory (`cd` in
 * `sh`) and the environment (`env`), then the user: util-linux `runuser` for a name, `setpriv` for a uid.
 */
export function execArgv(handle: SandboxHandle, options: RawExecOptions): string[] {
  const user = options.user ?? handle.user;
  const workdir = options.workdir ?? handle.workdir;
  const inner = withTimeout(options.argv, options.timeoutSec);
  const env = envList(options.env) ?? [];
  const withEnv = ['sh', '-c', CHDIR_SCRIPT, workdir, ...(env.length > 0 ? ['env', ...env] : []), ...inner];
  if (isRoot(user)) return withEnv;
  const numeric = numericUser(user);
  if (numeric) return ['sh', '-c', NUMERIC_USER_SCRIPT, 'berth-user', numeric.uid, numeric.gid, ...withEnv];
  const [name, group] = user.split(':');
  return ['runuser', '-u', name!, ...(group ? ['-g', group] : []), '--', ...withEnv];
}
