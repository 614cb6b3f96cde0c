// The local Kubernetes cluster for tests: `useLocalCluster()` starts it (or reuses one already up) through
// `npm run setup -- kubernetes`, and `release()` stops it when tests started it and no other test process still
// uses it. A machine that has built the binaries once starts the cluster in seconds.
import { CoreV1Api, KubeConfig, type V1Pod } from '@kubernetes/client-node';
import type Docker from 'dockerode';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { pushImage } from '../../src/sandbox/docker/push.ts';
import { repoRoot } from './cli.ts';
import { waitUntil } from './worker-process.ts';

const run = promisify(execFile);

/** What scripts/setup-kubernetes.sh writes to <BERTH_HOME>/kubernetes/endpoints.json. */
export interface ClusterEndpoints {
  version: string;
  kubeconfig: string;
  apiserver: string;
  /** host:port of the loopback registry the cluster pulls from over plain HTTP. */
  registry: string;
  node: string;
}

export interface LocalCluster extends ClusterEndpoints {
  kubeConfig: KubeConfig;
  core: CoreV1Api;
  /** Stops the cluster if tests started it and this was its last user. */
  release(): Promise<void>;
}

/** The first build of the Kubernetes binaries (about 15 minutes on 2 cores) happens inside this. */
export const FIRST_BUILD_TIMEOUT_MS = 45 * 60_000;

const stateDir = () => join(process.env.BERTH_HOME ?? join(homedir(), '.berth'), 'kubernetes');
const setupScript = () => join(repoRoot, 'scripts', 'setup-kubernetes.sh');
const usersDir = () => join(stateDir(), 'test-users');
const startedByTests = () => join(stateDir(), 'started-by-tests');
/** Which test run this process belongs to: the global setup's process id, which the run's workers inherit. */
export const TEST_RUN_ENV = 'BERTH_TEST_RUN';
const thisRun = () => process.env[TEST_RUN_ENV] ?? String(process.pid);

function apiserverUp(): boolean {
  const pidFile = join(stateDir(), 'run', 'kube-apiserver.pid');
  if (!existsSync(pidFile)) return false;
  return existsSync(`/proc/${readFileSync(pidFile, 'utf8').trim()}`);
}

async function setup(args: string[]): Promise<void> {
  try {
    await run('bash', [setupScript(), ...args], { maxBuffer: 16 * 1024 * 1024, timeout: FIRST_BUILD_TIMEOUT_MS });
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string; message: string };
    throw new Error(`bash scripts/setup-kubernetes.sh ${args.join(' ')} failed: ${e.message}\n${e.stdout ?? ''}${e.stderr ?? ''}`);
  }
}

/** Starts (or reuses) the local cluster and answers once its node is Ready. */
export async function useLocalCluster(): Promise<LocalCluster> {
  mkdirSync(usersDir(), { recursive: true });
  const me = join(usersDir(), `${process.pid}-${randomBytes(3).toString('hex')}`);
  writeFileSync(me, String(process.pid));
  const wasUp = apiserverUp();
  await setup([]);
  if (!wasUp) writeFileSync(startedByTests(), thisRun());
  const endpoints = JSON.parse(readFileSync(join(stateDir(), 'endpoints.json'), 'utf8')) as ClusterEndpoints;
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromFile(endpoints.kubeconfig);
  return {
    ...endpoints,
    kubeConfig,
    core: kubeConfig.makeApiClient(CoreV1Api),
    // The cluster outlives each file: test files start and finish at overlapping times, and a stop racing another
    // file's start left an apiserver that never answered. The run's global teardown stops it (stopClusterIfTestsStartedIt).
    release() {
      rmSync(me, { force: true });
      return Promise.resolve();
    },
  };
}

/** Waits (bounded) until the pod's containers all run and are ready; fails early, with the reason, when it cannot start. */
export async function waitForPodRunning(core: CoreV1Api, namespace: string, name: string, timeoutMs = 120_000): Promise<V1Pod> {
  let pod: V1Pod | undefined;
  await waitUntil(async () => {
    pod = await core.readNamespacedPod({ name, namespace });
    const statuses = pod.status?.containerStatuses ?? [];
    const stuck = statuses.map((s) => s.state?.waiting).find((w) => w && /ErrImage|ImagePullBackOff|CrashLoop|CreateContainer/.test(w.reason ?? ''));
    if (stuck) throw new Error(`pod ${namespace}/${name} cannot start: ${stuck.reason}: ${stuck.message ?? ''}`);
    if (pod.status?.phase === 'Failed') throw new Error(`pod ${namespace}/${name} failed: ${JSON.stringify(pod.status)}`);
    return pod.status?.phase === 'Running' && statuses.length > 0 && statuses.every((s) => s.ready);
  }, timeoutMs, `pod ${namespace}/${name} running`);
  return pod!;
}

/** Waits (bounded) until the apiserver no longer has the pod. */
export async function waitForPodGone(core: CoreV1Api, namespace: string, name: string, timeoutMs = 60_000): Promise<void> {
  await waitUntil(async () => {
    try {
      await core.readNamespacedPod({ name, namespace });
      return false;
    } catch (err) {
      if ((err as { code?: number }).code === 404) return true;
      throw err;
    }
  }, timeoutMs, `pod ${namespace}/${name} gone`);
}

/** Pushes a local image (`repo:tag`, repo under the cluster's registry) and answers `repo@sha256:…`, the reference pods pull by digest. */
export function pushByDigest(docker: Docker, tag: string): Promise<string> {
  const at = tag.lastIndexOf(':');
  return pushImage(docker, tag, tag.slice(0, at), tag.slice(at + 1));
}

/**
 * At the end of a test run: stops the local cluster when a test of this run started it, and only then. Two runs on one
 * machine share it: one that did not start it never stops it, and the one that did leaves it up while a test of
 * another run still uses it.
 */
export async function stopClusterIfTestsStartedIt(): Promise<void> {
  const starter = existsSync(startedByTests()) ? readFileSync(startedByTests(), 'utf8').trim() : undefined;
  if (starter !== thisRun()) return;
  rmSync(startedByTests(), { force: true });
  const inUse = existsSync(usersDir()) && readdirSync(usersDir()).some((f) => {
    const pid = readFileSync(join(usersDir(), f), 'utf8').trim();
    return existsSync(`/proc/${pid}`);
  });
  if (!inUse) await setup(['--stop']);
}
