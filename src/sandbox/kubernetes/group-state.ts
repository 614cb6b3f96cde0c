// Whether a group's pod is up, as `docker compose up --wait` would judge its containers: a pure reading of the pod's
// status, so the driver's wait is a loop around it.
import type { V1ContainerStatus, V1Pod } from '@kubernetes/client-node';
import type { GroupOrder } from './group-spec.ts';
import { HOLDER, LOADER } from './group-spec.ts';
import { containerStatus } from './pod-address.ts';

export interface GroupFailure {
  readonly service: string;
  readonly container: string;
  readonly why: string;
}

export interface GroupState {
  readonly state: 'ready' | 'waiting' | 'failed';
  readonly failures: readonly GroupFailure[];
  /** Services not ready yet. */
  readonly waiting: readonly string[];
  /** Services that ran to completion (exit 0). */
  readonly exited: readonly string[];
}

const PULL_FAILURE = /ErrImagePull|ImagePullBackOff|InvalidImageName|ErrImageNeverPull|CreateContainerConfigError|CreateContainerError/;

type Verdict = 'ready' | 'waiting' | 'exited' | { why: string };

function verdict(st: V1ContainerStatus | undefined, kind: 'one-shot' | 'sidecar' | 'leaf' | 'holder'): Verdict {
  if (!st) return 'waiting';
  const waiting = st.state?.waiting;
  if (waiting?.reason && PULL_FAILURE.test(waiting.reason)) return { why: `cannot start (${waiting.reason}): ${waiting.message ?? ''}`.trim() };
  const ended = st.state?.terminated ?? st.lastState?.terminated;
  if (kind === 'sidecar' && ((st.restartCount ?? 0) > 0 || st.lastState?.terminated)) {
    return { why: `exited with code ${ended?.exitCode ?? 'unknown'}${ended?.reason === 'OOMKilled' ? ' (out of memory)' : ''} or failed its healthcheck at start` };
  }
  const term = st.state?.terminated;
  if (term) {
    if (term.exitCode === 0 && (kind === 'one-shot' || kind === 'leaf')) return 'exited';
    return { why: `exited with code ${term.exitCode}${term.reason === 'OOMKilled' ? ' (out of memory)' : ''}` };
  }
  if (!st.state?.running) return 'waiting';
  if (kind === 'sidecar') return st.started ? 'ready' : 'waiting';
  if (kind === 'leaf') return st.ready ? 'ready' : 'waiting';
  return 'ready';
}

/** The pod's group as Compose would see it; `services` maps each service to its container. */
export function groupState(pod: V1Pod, order: GroupOrder, containers: Readonly<Record<string, string>>): GroupState {
  const failures: GroupFailure[] = [];
  const waiting: string[] = [];
  const exited: string[] = [];
  const look = (service: string, container: string, kind: 'one-shot' | 'sidecar' | 'leaf' | 'holder') => {
    const v = verdict(containerStatus(pod, container), kind);
    if (v === 'waiting') waiting.push(service);
    else if (v === 'exited') exited.push(service);
    else if (v !== 'ready') failures.push({ service, container, why: v.why });
  };
  const loader = containerStatus(pod, LOADER);
  if (loader?.state?.terminated && loader.state.terminated.exitCode !== 0) failures.push({ service: LOADER, container: LOADER, why: `copying the task's files ended with code ${loader.state.terminated.exitCode}` });
  for (const s of order.init) look(s, containers[s]!, order.oneShots.includes(s) ? 'one-shot' : 'sidecar');
  for (const s of order.leaves) look(s, containers[s]!, 'leaf');
  look(HOLDER, HOLDER, 'holder');
  if (pod.status?.phase === 'Failed' && failures.length === 0) failures.push({ service: '(pod)', container: '', why: `the pod failed: ${pod.status.reason ?? ''} ${pod.status.message ?? ''}`.trim() });
  const state = failures.length > 0 ? 'failed' : waiting.length > 0 ? 'waiting' : 'ready';
  return { state, failures, waiting: waiting.filter((s) => s !== HOLDER), exited };
}
