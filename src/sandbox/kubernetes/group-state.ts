// Whether a group's pod is up, as `docker compose up --wait` would judge its containers: a pure reading of the pod's
// status, so the driver's wait is a loop around it.
import type { V1ContainerStatus, V1Pod } from '@kubernetes/client-node';
import type { GroupOrder } from './group-spec.ts';
import { HOLDER, LOADER } from './group-spec.ts';
import { containerStatus } from './pod-address.ts';
import { PULLING, pullFailureIsFinal } from './pull-failure.ts';

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

const START_FAILURE = /ErrImagePull|ImagePullBackOff|InvalidImageName|ErrImageNeverPull|CreateContainerConfigError|CreateContainerError/;

/** How the group's pod pulls: with a pull secret, a refused authorization is waited on for a while (pull-failure.ts). */
export interface GroupPull {
  readonly hasPullSecret: boolean;
  /** ms since the container's pull was first seen failing (0 when it is not). */
  readonly failingForMs: (container: string) => number;
}

const NO_SECRET: GroupPull = { hasPullSecret: false, failingForMs: () => 0 };

type Verdict = 'ready' | 'waiting' | 'exited' | { why: string };

function verdict(st: V1ContainerStatus | undefined, kind: 'one-shot' | 'sidecar' | 'leaf' | 'holder', pull: GroupPull): Verdict {
  if (!st) return 'waiting';
  const waiting = st.state?.waiting;
  if (waiting?.reason && START_FAILURE.test(waiting.reason)) {
    const message = waiting.message ?? '';
    const mayPass = PULLING.test(waiting.reason) && !pullFailureIsFinal({ reason: waiting.reason, message, hasPullSecret: pull.hasPullSecret, failingForMs: pull.failingForMs(st.name) });
    return mayPass ? 'waiting' : { why: `cannot start (${waiting.reason}): ${message}`.trim() };
  }
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
export function groupState(pod: V1Pod, order: GroupOrder, containers: Readonly<Record<string, string>>, pull: GroupPull = NO_SECRET): GroupState {
  const failures: GroupFailure[] = [];
  const waiting: string[] = [];
  const exited: string[] = [];
  const look = (service: string, container: string, kind: 'one-shot' | 'sidecar' | 'leaf' | 'holder') => {
    const v = verdict(containerStatus(pod, container), kind, pull);
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
