// The Kubernetes driver (issue 23): a pod per single sandbox, and one pod per Compose group (group.ts), through
// @kubernetes/client-node; exec and files over the exec API, image configuration from the registry. Stop and start
// are not here yet: each says so by name (and the capabilities say so before any work).
import { CoreV1Api, KubeConfig, VersionApi, type V1Pod } from '@kubernetes/client-node';
import { PooledKubeConfig } from './pooled-config.ts';
import { randomUUID } from 'node:crypto';
import { PassThrough, Readable } from 'node:stream';
import type {
  ComposeFileSpec, DriverCapabilities, EngineIdentity, GroupCreateResult, GroupHandle, GroupSpec, LabelledSandbox, PathKind, SandboxDriver, ServiceHandle,
  SingleSandboxSpec,
} from '../driver.ts';
import type { ComposeCliSettings } from '../compose/cli.ts';
import { SandboxLost, SandboxNeverReady, SeedFailed } from '../errors.ts';
import { DEFAULT_OUTPUT_CAP, type RawExecOptions } from '../exec.ts';
import type { ImageConfig } from '../image-config.ts';
import { LABEL_USER, LABEL_WORKDIR, LABEL_WORKFLOW } from '../names.ts';
import { isSeeded } from '../seed-scripts.ts';
import { lineMatches } from '../shell-lines.ts';
import type { ExecResult, SandboxInfo } from '../types.ts';
import { PodEgress } from './egress.ts';
import { execInPod, getArchiveFromPod, PodExecError, putArchiveInPod, type PodContainer, type PodExecResult } from './exec.ts';
import { ANNOTATION_NAME, CONTAINER, execArgv, MANAGED_LABEL, podName, singlePod } from './pod-spec.ts';
import { RegistryReader } from './registry.ts';
import { KubernetesGroups, removeGroupPod } from './group.ts';
import { ANNOTATION_GROUP } from './group-spec.ts';
import { containerStatus, podAndContainer } from './pod-address.ts';
import { STOP_PROCESSES_SCRIPT } from './stop-processes.ts';
import { podNotStarted, podRefusedStart } from './start-failure.ts';
import { PullFailureClock, pullFailureIsFinal } from './pull-failure.ts';
import { StartedEvents } from './started-events.ts';
import { ChannelEnded, NOT_FOUND_MARK, PodChannel } from './pod-channel.ts';

export interface KubernetesDriverOptions {
  /** Default: the file `kubeconfigFile` ([kubernetes].kubeconfig), else KUBECONFIG, else ~/.kube/config, else in-cluster credentials (client-node's loadFromDefault). */
  kubeConfig?: KubeConfig;
  kubeconfigFile?: string;
  namespace?: string;
  /** Budget for a new pod to run (image pull included) and its keep-alive to reach `sleep infinity`. */
  startTimeoutMs?: number;
  /** Where images are described (the registry the cluster pulls from). */
  registry?: RegistryReader;
  /** The egress controller image pods with network phases get (the provider builds and pushes it on first need). */
  egressImage?: () => Promise<string>;
  /** Where pods reach this worker (the egress proxy); default: this host's address toward the first node. */
  egressAddress?: string;
  /** Also keep NetworkPolicy objects per phase, for a CNI that enforces them (the pods' own rules hold either way). */
  networkPolicies?: boolean;
  /** Where Docker Compose is: it reads a Compose task's file (BERTH_COMPOSE_CLI, DOCKER_CONFIG). */
  compose?: ComposeCliSettings;
  /** The Secret pods pull with, when the registry needs credentials (pull-secret.ts). */
  imagePullSecret?: string;
  /** Commands over the keep-alive's channel where it can have one (pod-channel.ts); default true. */
  execChannel?: boolean;
}

/**
 * Whether the keep-alive's setup is done: some process the container sees is `sleep infinity` (a pod's own, or with a
 * shared PID namespace the pod's). Only a `sleep` (its comm, read by the shell itself) has its command line read:
 * each `tr` is a process of its own.
 */
const keepAliveScan = (before = '', alsoTrue = '') => `${before}for d in /proc/[0-9]*; do read -r c 2>/dev/null < "$d/comm" || continue; ` +
  `[ "$c" = sleep ] || continue; [ "$(tr '\\0' ' ' < "$d/cmdline" 2>/dev/null)" = "sleep infinity " ]${alsoTrue} && exit 0; done; exit 1`;
const KEEP_ALIVE_RUNS = keepAliveScan();
/** The same in a group's pod, where a sidecar may sleep too: only a process of main's own container (its mount namespace) counts. */
const KEEP_ALIVE_RUNS_IN_MAIN = keepAliveScan('me=$(readlink /proc/self/ns/mnt); ', ' && [ "$(readlink "$d/ns/mnt" 2>/dev/null)" = "$me" ]');

/**
 * `script` in a container of pod `uid` only: the kubelet mounts the pod's own files (its /etc/hosts, termination log)
 * from its folder `pods/<uid>/`, which the container's mount table names. Asked before the pod's status shows the
 * container running, so not a container of a same-named pod deleted a moment ago that the node has not stopped yet.
 */
export const ofPod = (uid: string, script: string): string =>
  `${lineMatches('berth_m', '/proc/self/mountinfo', `*'/pods/${uid}/'*`)}; [ -n "$berth_m" ] || exit 1; ${script}`;

/**
 * The keep-alive check, waiting in the container up to about a second for a setup still running (one exec, not one per
 * look). In a subshell: the check ends with `exit`, which in a `{ }` group ended the whole script at the first miss.
 */
const awaitingKeepAlive = (check: string): string => `n=0; until ( ${check} ); do n=$((n+1)); [ $n -ge 10 ] && exit 1; sleep 0.1 || exit 1; done`;

export const CLUSTER = '(kubernetes cluster)';
/** How long a command waits for a new pod's channel to answer before it goes through exec (a setup still running). */
const CHANNEL_WAIT_MS = 30_000;
const LOG_TAIL_LINES = 40;
const LOG_TAIL_CHARS = 2000;
/** How long a log read that failed waits for the pod's status to show its container before asking again. */
const LOG_WAIT_MS = 5000;

function statusCode(err: unknown): number | undefined {
  return (err as { code?: number }).code;
}

/** Tail of the output within the cap, and whether it was cut. */
function capped(bytes: Buffer, cap: number): { text: string; truncated: boolean } {
  if (bytes.length <= cap) return { text: bytes.toString('utf8'), truncated: false };
  return { text: bytes.subarray(bytes.length - cap).toString('utf8'), truncated: true };
}

export class KubernetesDriver implements SandboxDriver {
  readonly sandbox = 'kubernetes';
  readonly capabilities: DriverCapabilities = {
    groups: true, internalNetworks: true, networkSwitching: true, userWithGroup: true, gpus: true, noNetwork: true, allowlist: true, finalState: false, stopStart: true, modelGateway: true,
  };
  readonly kubeConfig: KubeConfig;
  readonly namespace: string;
  private readonly core: CoreV1Api;
  private readonly startTimeoutMs: number;
  private readonly registry: RegistryReader;
  /** The pods' network per phase (egress.ts). */
  readonly egress: PodEgress;
  private readonly groups: KubernetesGroups;
  /** A sidecar's image, named as the local engine has it, as the registry reference pods pull (the provider's push). */
  publishImage: ((ref: string) => Promise<string>) | undefined;
  /** The files at a path of an image, from the engine beside the worker: a Compose volume's first files (the provider's). */
  imagePathArchive: ((image: string, path: string) => Promise<Buffer | null>) | undefined;
  private readonly imagePullSecret: string | undefined;
  /** The kubelet's `Started` events of the namespace, one watch for every pod being waited for. */
  private readonly started: StartedEvents;
  /** Pods returned once started, their keep-alive's setup to be confirmed by their next exec (readyOnFirstExec): pod name → uid. */
  private readonly unconfirmed = new Map<string, string>();
  /** What a confirming exec prints when the keep-alive is not there yet: never the output of a command it ran (it ran none). */
  private readonly notReadyMark = `berth-keep-alive-not-ready-${randomUUID()}`;
  /** The request channels of the pods this process created (pod-channel.ts), by pod name. */
  private readonly channels = new Map<string, PodChannel>();
  private readonly execChannel: boolean;

  constructor(options: KubernetesDriverOptions = {}) {
    this.kubeConfig = options.kubeConfig ?? (() => {
      const kc = new PooledKubeConfig();
      if (options.kubeconfigFile) kc.loadFromFile(options.kubeconfigFile); else kc.loadFromDefault();
      return kc;
    })();
    this.namespace = options.namespace ?? this.kubeConfig.getContextObject(this.kubeConfig.getCurrentContext())?.namespace ?? 'default';
    this.core = this.kubeConfig.makeApiClient(CoreV1Api);
    this.startTimeoutMs = options.startTimeoutMs ?? 180_000;
    this.registry = options.registry ?? new RegistryReader();
    this.egress = new PodEgress({ kubeConfig: this.kubeConfig, core: this.core, namespace: this.namespace, image: options.egressImage, address: options.egressAddress, networkPolicies: options.networkPolicies });
    const readPod = (name: string) => this.readPod(name);
    const deletePod = (name: string, wait: boolean) => this.deletePod(name, wait);
    this.groups = new KubernetesGroups({
      core: this.core, namespace: this.namespace, startTimeoutMs: this.startTimeoutMs, compose: options.compose, readPod, deletePod,
      ...(options.imagePullSecret ? { imagePullSecret: options.imagePullSecret } : {}),
      exec: (t, o) => this.exec(t, o), putArchive: (t, d, a) => this.putArchive(t, d, a), getArchive: (t, p) => this.getArchive(t, p),
      pathKind: (t, p) => this.pathKind(t, p), imageConfiguration: (ref) => this.imageConfiguration(ref),
      publishImage: (ref) => (this.publishImage ? this.publishImage(ref) : Promise.resolve(ref)),
      imagePathArchive: (image, path) => (this.imagePathArchive ? this.imagePathArchive(image, path) : Promise.resolve(null)),
      keepAliveRuns: (main) => this.keepAliveRuns(main, KEEP_ALIVE_RUNS_IN_MAIN), egress: this.egress,
    });
    this.imagePullSecret = options.imagePullSecret;
    this.execChannel = options.execChannel ?? true;
    this.started = new StartedEvents(this.kubeConfig, this.namespace);
  }

  async engineIdentity(): Promise<EngineIdentity> {
    try {
      const version = await this.kubeConfig.makeApiClient(VersionApi).getCode();
      const server = this.kubeConfig.getCurrentCluster()?.server ?? 'unknown';
      return { id: `kubernetes:${server}/${this.namespace}`, name: server, version: version.gitVersion };
    } catch (err) {
      throw new SandboxLost(CLUSTER, err);
    }
  }

  private target(handle: ServiceHandle): PodContainer {
    return { namespace: this.namespace, ...podAndContainer(handle.containerId) };
  }

  private async readPod(name: string): Promise<V1Pod | undefined> {
    try {
      return await this.core.readNamespacedPod({ name, namespace: this.namespace });
    } catch (err) {
      if (statusCode(err) === 404) return undefined;
      throw new SandboxLost(name, err);
    }
  }

  /**
   * A new pod is ready once its keep-alive's root setup is done and `sleep infinity` runs; a setup that fails ends the
   * pod. Its container is asked (an exec beside the read) once the kubelet's `Started` event for it came (started-events.ts),
   * or, while that watch is not running, at every look once the pod is on a node: the kubelet shows a started container
   * in the pod's status only at its next relist, up to a second after exec reaches it, and a naive loop waits for that.
   * The checks of a sandbox's state after the seed (inspect, a failed exec) accept a container that answers while its
   * status still lags (runningNow).
   */
  private async waitReady(handle: ServiceHandle, uid: string | undefined, confirmInFirstExec = false): Promise<void> {
    const deadline = Date.now() + this.startTimeoutMs;
    const pullClock = new PullFailureClock();
    let onNode = false;
    let shownRunning = false;
    for (let attempt = 0; ; attempt++) {
      const watched = uid !== undefined && this.started.live();
      const startSeen = uid !== undefined && (watched ? this.started.has(uid, CONTAINER) || shownRunning : onNode);
      // The container started: its next exec asks for the keep-alive first (confirmedExec), one exec fewer.
      if (confirmInFirstExec && watched && startSeen) {
        this.unconfirmed.set(handle.containerId, uid!);
        return;
      }
      const asking: Promise<boolean> = startSeen ? this.keepAliveRuns(handle, ofPod(uid!, awaitingKeepAlive(KEEP_ALIVE_RUNS))).catch(() => false) : Promise.resolve(false);
      const [pod, ready]: [V1Pod | undefined, boolean] = await Promise.all([this.readPod(handle.containerId), asking]);
      if (!pod) throw new SandboxLost(handle.name, new Error(`pod ${handle.containerId} was deleted while starting`));
      onNode = Boolean(pod.spec?.nodeName);
      const status = pod.status?.containerStatuses?.[0];
      const state = status?.state;
      shownRunning = Boolean(state?.running);
      const waiting = state?.waiting?.reason ?? '';
      pullClock.observe(status ? [status] : []);
      const pull = { reason: waiting, message: state?.waiting?.message ?? '', hasPullSecret: this.imagePullSecret !== undefined, failingForMs: status ? pullClock.failingForMs(status.name) : 0 };
      if (pullFailureIsFinal(pull)) {
        throw new SeedFailed('harbor:seed_failed', `pod ${handle.containerId} cannot pull ${pod.spec?.containers[0]?.image}: ${state?.waiting?.message ?? waiting}`);
      }
      const egressFailed = await this.egress.startFailure(pod);
      if (egressFailed) throw egressFailed;
      if (ready) return;
      if (state?.terminated || pod.status?.phase === 'Failed' || pod.status?.phase === 'Succeeded') throw await this.setupFailure(handle, state?.terminated?.exitCode);
      // A pod created before this worker knew its uid (none here) is asked once its status says running.
      if (uid === undefined && state?.running && (await this.keepAliveRuns(handle))) return;
      if (Date.now() > deadline) throw new SandboxNeverReady(`pod ${handle.containerId} not ready after ${this.startTimeoutMs} ms (${waiting || pod.status?.phase})`);
      // Watched: the next look comes when the start is seen, else reads the pod (a pull failing, the pod ended) at a
      // calmer pace: 1, 2, 4 s, then every 5 s (32 pods starting at once take about 6 s, and each read costs the apiserver).
      if (watched && !startSeen) await this.started.wait(uid!, CONTAINER, Math.min(1000 * 2 ** attempt, 5000));
      else await new Promise((r) => setTimeout(r, Math.min(50 * (attempt + 1), 250)));
    }
  }

  /**
   * Whether a container of the pod runs: its status says so, or (the status still lagging its start, up to a kubelet
   * relist) the container itself answers an exec, asked of this pod's container only (ofPod). A pod that is ending,
   * or a container the status shows ended, does not run.
   */
  private async runningNow(pod: V1Pod | undefined, container: string): Promise<boolean> {
    if (!pod || pod.metadata?.deletionTimestamp) return false;
    const state = containerStatus(pod, container)?.state;
    if (state?.running) return true;
    const uid = pod.metadata?.uid;
    if (state?.terminated || !uid || !pod.spec?.nodeName || pod.status?.phase === 'Failed' || pod.status?.phase === 'Succeeded') return false;
    const target = { namespace: this.namespace, pod: pod.metadata!.name!, container };
    const r = await execInPod(this.kubeConfig, target, ['sh', '-c', ofPod(uid, 'true')]).catch(() => undefined);
    return r?.exitCode === 0;
  }

  private async keepAliveRuns(handle: ServiceHandle, script = KEEP_ALIVE_RUNS): Promise<boolean> {
    try {
      return (await execInPod(this.kubeConfig, this.target(handle), ['sh', '-c', script])).exitCode === 0;
    } catch (err) {
      if (err instanceof PodExecError) return false; // the container ended meanwhile: the next look says why
      throw err;
    }
  }

  /** The keep-alive ended before `sleep infinity`: its output (the container's log) is the seed failure. */
  private async setupFailure(handle: ServiceHandle, exitCode: number | undefined): Promise<SeedFailed> {
    const text = await this.core.readNamespacedPodLog({ name: handle.containerId, namespace: this.namespace, container: CONTAINER, tailLines: 50 })
      .then((t) => String(t).trim()).catch(() => '');
    return new SeedFailed('harbor:seed_failed', `preparing sandbox ${handle.name} failed (exit ${exitCode ?? 'unknown'}): ${text || 'no output'}`, text);
  }

  private handleOf(pod: V1Pod): ServiceHandle {
    const a = pod.metadata?.annotations ?? {};
    return { name: a[ANNOTATION_NAME] ?? pod.metadata!.name!, containerId: pod.metadata!.name!, user: a[LABEL_USER] ?? 'root', workdir: a[LABEL_WORKDIR] ?? '/' };
  }

  async createOrAdoptSandbox(spec: SingleSandboxSpec): Promise<{ handle: ServiceHandle; adopted: boolean }> {
    const body = await this.egress.withController(singlePod(spec, this.execChannel), spec);
    if (this.imagePullSecret) body.spec!.imagePullSecrets = [{ name: this.imagePullSecret }];
    const handle: ServiceHandle = { name: spec.name, containerId: body.metadata!.name!, user: spec.user, workdir: spec.workdir };
    let uid: string | undefined;
    for (let attempt = 0; ; attempt++) {
      try {
        uid = (await this.core.createNamespacedPod({ namespace: this.namespace, body })).metadata?.uid;
        break;
      } catch (err) {
        if (statusCode(err) !== 409 || attempt > 0) throw new SandboxLost(spec.name, err);
      }
      // A pod of that name: adopt it when it runs and finished its seed, else replace it (RUN lines are not idempotent).
      const existing = await this.readPod(handle.containerId);
      if (existing && (await this.runningNow(existing, CONTAINER)) && (await isSeeded(this, this.handleOf(existing)))) {
        return { handle: this.handleOf(existing), adopted: true };
      }
      await this.deletePod(handle.containerId, true);
    }
    await this.waitReady(handle, uid, spec.readyOnFirstExec === true);
    if (uid !== undefined && body.spec!.containers[0]?.stdin) this.openChannel(handle.containerId, uid);
    return { handle, adopted: false };
  }

  /** The pod's keep-alive channel, attached now (its first answer says the setup is done, in this pod's container). */
  private openChannel(name: string, uid: string): void {
    this.channels.get(name)?.close();
    const channel: PodChannel = new PodChannel(this.kubeConfig, { namespace: this.namespace, pod: name, container: CONTAINER }, ofPod(uid, 'true'), () => {
      if (this.channels.get(name) === channel) this.channels.delete(name);
    });
    this.channels.set(name, channel);
  }

  /** The pod's channel once it answered, waiting for that at most CHANNEL_WAIT_MS (a setup still running: exec then). */
  private async readyChannel(name: string): Promise<PodChannel | undefined> {
    const channel = this.channels.get(name);
    if (!channel?.open) return undefined;
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<false>((resolve) => { timer = setTimeout(() => resolve(false), CHANNEL_WAIT_MS); });
    const ready = await Promise.race([channel.ready, late]).finally(() => clearTimeout(timer));
    if (!ready || !channel.open) return undefined;
    // The loop runs only once the setup is done: the pod is ready.
    this.unconfirmed.delete(name);
    return channel;
  }

  async attach(name: string): Promise<ServiceHandle> {
    const pod = await this.readPod(podName(name));
    if (!pod || pod.metadata?.deletionTimestamp) throw new SandboxLost(name, new Error(`pod ${podName(name)} is gone`));
    return this.handleOf(pod);
  }

  async inspect(target: ServiceHandle): Promise<SandboxInfo> {
    const { pod: name, container } = podAndContainer(target.containerId);
    const pod = await this.readPod(name);
    if (!pod) throw new SandboxLost(target.name, new Error(`pod ${name} is gone`));
    const state = containerStatus(pod, container)?.state;
    const running = await this.runningNow(pod, container);
    return {
      name: this.handleOf(pod).name,
      containerId: target.containerId,
      running,
      status: running ? 'running' : state?.terminated ? 'exited' : (state?.waiting?.reason ?? pod.status?.phase ?? 'unknown').toLowerCase(),
      exitCode: state?.terminated ? state.terminated.exitCode : null,
      oomKilled: state?.terminated?.reason === 'OOMKilled',
      labels: { ...(pod.metadata?.annotations ?? {}) },
      image: [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])].find((c) => c.name === container)?.image ?? '',
    };
  }

  async logTail(target: ServiceHandle): Promise<string> {
    const { pod, container } = podAndContainer(target.containerId);
    const read = async () => String(await this.core.readNamespacedPodLog({ name: pod, namespace: this.namespace, container, tailLines: LOG_TAIL_LINES })).trimEnd();
    let text: string;
    try {
      text = await read();
    } catch {
      // The kubelet serves a container's log only once its own status of the pod has the container (its next relist,
      // later under load), and a pod reached over its channel may be that young: asked again once the status shows it.
      if (!(await this.statusShows(pod, container, LOG_WAIT_MS))) return '(log unavailable)';
      try {
        text = await read();
      } catch {
        return '(log unavailable)';
      }
    }
    return text.length > LOG_TAIL_CHARS ? `…${text.slice(-LOG_TAIL_CHARS)}` : text || '(no output)';
  }

  /** Whether the pod's status shows the container started (running or ended) within `ms`. */
  private async statusShows(pod: string, container: string, ms: number): Promise<boolean> {
    for (const until = Date.now() + ms; ;) {
      const state = containerStatus(await this.readPod(pod).catch(() => undefined), container)?.state;
      if (state?.running || state?.terminated) return true;
      if (Date.now() > until) return false;
      await new Promise((r) => setTimeout(r, 250));
    }
  }

  createOrAdoptGroup(spec: GroupSpec): Promise<GroupCreateResult> {
    return this.groups.createOrAdopt(spec);
  }

  groupRefusal(spec: ComposeFileSpec): Promise<string | null> {
    return this.groups.refusal(spec);
  }

  inspectGroup(project: string): Promise<GroupHandle> {
    return this.groups.inspect(project);
  }

  async exec(target: ServiceHandle, options: RawExecOptions): Promise<ExecResult> {
    const channel = this.channels.has(target.containerId) ? await this.readyChannel(target.containerId) : undefined;
    if (channel) return this.channelExec(channel, target, options);
    const uid = this.unconfirmed.get(target.containerId);
    return uid === undefined ? this.execLaunched(target, options) : this.confirmedExec(target, options, uid);
  }

  /** execLaunched over the pod's channel: the same launcher, answers and start failures; a channel that ended, as a broken exec. */
  private async channelExec(channel: PodChannel, target: ServiceHandle, options: RawExecOptions): Promise<ExecResult> {
    const cap = options.outputCapBytes ?? DEFAULT_OUTPUT_CAP;
    const launcher = execArgv(target, options);
    let got: Awaited<ReturnType<PodChannel['run']>>;
    try {
      got = await channel.run(launcher, cap, options.timeoutSec, options.signal);
    } catch (err) {
      throw err instanceof ChannelEnded ? await this.lostOrAsIs(target, new PodExecError(err.target, undefined, err.message)) : err;
    }
    if (got === 'guard') return { exitCode: 124, stdout: '', stderr: '', stdoutTruncated: false, stderrTruncated: false, timedOut: true };
    if (got.exitCode === 127 && got.stdout.toString('utf8') === `${NOT_FOUND_MARK}\n`) {
      const refused = podRefusedStart(launcher, { message: `exec: "${launcher[0]}": executable file not found in $PATH` });
      return { exitCode: 126, stdout: '', stderr: refused!.text, stdoutTruncated: false, stderrTruncated: false, timedOut: false, notStarted: refused };
    }
    return this.launchedResult(launcher, options, { exitCode: got.exitCode, stdout: got.stdout, stderr: got.stderr }, got.stdoutBytes > cap, got.stderrBytes > cap);
  }

  /**
   * The first exec in a pod returned once started (readyOnFirstExec): the keep-alive is asked for first, in the same
   * exec, as waitReady asks it. When it is not there, nothing ran: waitReady finds what the seed would have (a failed
   * setup, a lost pod) or the keep-alive, and the exec runs then. A failed exec (thrown, or ended by a signal) is the
   * seed's failure when waitReady finds one, else the exec's own, as for any exec (not run again: it may have run).
   */
  private async confirmedExec(target: ServiceHandle, options: RawExecOptions, uid: string): Promise<ExecResult> {
    const check = `( ${ofPod(uid, awaitingKeepAlive(KEEP_ALIVE_RUNS))} ) || { echo ${this.notReadyMark} >&2; exit 97; }; exec "$@"`;
    let answer: ExecResult;
    try {
      answer = await this.execLaunched(target, options, ['sh', '-c', check, 'berth-ready']);
    } catch (err) {
      await this.confirmReady(target);
      throw err;
    }
    if (answer.exitCode === 97 && answer.stderr.includes(this.notReadyMark)) {
      await this.confirmReady(target);
      return this.execLaunched(target, options);
    }
    // A setup that failed while the check waited ends the container and kills the exec with it (a signal's exit): such
    // an answer is the command's only once the pod is found ready. Any other exit is the command's own.
    if (answer.exitCode >= 128) await this.confirmReady(target);
    else this.unconfirmed.delete(target.containerId);
    return answer;
  }

  private async execLaunched(target: ServiceHandle, options: RawExecOptions, before: readonly string[] = []): Promise<ExecResult> {
    const launcher = execArgv(target, options);
    try {
      const r = await execInPod(this.kubeConfig, this.target(target), [...before, ...launcher]);
      return this.launchedResult(launcher, options, r, false, false);
    } catch (err) {
      const mapped = await this.lostOrAsIs(target, err);
      // The container runs, but the runtime could not start the launcher's first program (no sh or runuser there).
      const refused = mapped === err && err instanceof PodExecError && err.status ? podRefusedStart(launcher, err.status) : undefined;
      if (refused) return { exitCode: 126, stdout: '', stderr: refused.text, stdoutTruncated: false, stderrTruncated: false, timedOut: false, notStarted: refused };
      throw mapped;
    }
  }

  /** A launcher's answer as an exec's result: the last `cap` bytes of each stream, a timeout, a start failure. */
  private launchedResult(launcher: string[], options: RawExecOptions, r: PodExecResult, outCut: boolean, errCut: boolean): ExecResult {
    const cap = options.outputCapBytes ?? DEFAULT_OUTPUT_CAP;
    const out = capped(r.stdout, cap);
    const err = capped(r.stderr, cap);
    // `timeout` exits 124 when the budget ran out (137 when it had to KILL).
    const timedOut = options.timeoutSec !== undefined && options.timeoutSec > 0 && (r.exitCode === 124 || r.exitCode === 137);
    const result: ExecResult = {
      exitCode: r.exitCode, stdout: out.text, stderr: err.text, stdoutTruncated: out.truncated || outCut, stderrTruncated: err.truncated || errCut, timedOut,
    };
    const notStarted = podNotStarted(launcher, options, result);
    return notStarted ? { ...result, notStarted } : result;
  }

  /** An exec error is a lost sandbox when the pod or its container is no longer running. */
  private async lostOrAsIs(target: ServiceHandle, err: unknown): Promise<unknown> {
    if (!(err instanceof PodExecError)) return err;
    const { pod: name, container } = podAndContainer(target.containerId);
    const pod = await this.readPod(name).catch(() => undefined);
    const status = containerStatus(pod, container);
    if (await this.runningNow(pod, container)) return err;
    // A group's service that ran to its end (a one-shot) while main runs: nothing is lost, but no exec reaches it.
    if (container !== CONTAINER && status?.state?.terminated && containerStatus(pod, CONTAINER)?.state?.running) {
      return new Error(`service ${target.name} has exited (code ${status.state.terminated.exitCode}); the Kubernetes sandbox cannot read or run anything in an ended container`);
    }
    return new SandboxLost(target.name, err);
  }

  /** A pod still unconfirmed (readyOnFirstExec) waited for as the seed would (before a copy over exec, a stdin exec). */
  async confirmReady(target: ServiceHandle): Promise<void> {
    const uid = this.unconfirmed.get(target.containerId);
    if (uid === undefined) return;
    try {
      await this.waitReady(target, uid);
    } finally {
      this.unconfirmed.delete(target.containerId);
    }
  }

  async putArchive(target: ServiceHandle, containerDir: string, archive: Buffer | NodeJS.ReadableStream): Promise<void> {
    await this.confirmReady(target);
    const input = Buffer.isBuffer(archive) ? archive : (archive as Readable).pipe(new PassThrough());
    try {
      await putArchiveInPod(this.kubeConfig, this.target(target), containerDir, input);
    } catch (err) {
      throw await this.lostOrAsIs(target, err);
    }
  }

  async getArchive(target: ServiceHandle, containerPath: string): Promise<NodeJS.ReadableStream> {
    await this.confirmReady(target);
    try {
      return Readable.from([await getArchiveFromPod(this.kubeConfig, this.target(target), containerPath)]);
    } catch (err) {
      const mapped = await this.lostOrAsIs(target, err);
      if (mapped === err) throw new Error(`${containerPath} does not exist in sandbox ${target.name}`);
      throw mapped;
    }
  }

  /** Kubernetes has no archive stat: a shell in the pod answers (so a shell-less image cannot be asked yet). */
  async pathKind(target: ServiceHandle, containerPath: string): Promise<PathKind | null> {
    const script = 'if [ -d "$1" ]; then echo dir; elif [ -e "$1" ]; then echo file; fi';
    const r = await this.exec({ ...target, user: '0' }, { argv: ['sh', '-c', script, 'sh', containerPath] });
    if (r.exitCode !== 0) throw new Error(`cannot tell what ${containerPath} is in sandbox ${target.name}: ${r.stderr.trim() || `exit ${r.exitCode}`}`);
    const kind = r.stdout.trim();
    return kind === 'dir' || kind === 'file' ? kind : null;
  }

  putOnNetwork(target: ServiceHandle, network: string): Promise<void> {
    return this.egress.putOnNetwork(target, network);
  }

  /** Ends every process of the sandbox but its keep-alive, files kept (stop-processes.ts); a pod that is gone is left so, as Docker's stop. */
  async stop(target: ServiceHandle): Promise<void> {
    try {
      await execInPod(this.kubeConfig, this.target(target), ['sh', '-c', STOP_PROCESSES_SCRIPT]);
    } catch (err) {
      if ((await this.lostOrAsIs(target, err)) === err) throw err;
    }
  }

  /** The keep-alive never stopped (stop ends only the agent's processes): start asks only that the pod is still there. */
  async start(target: ServiceHandle): Promise<void> {
    if (!(await this.inspect(target)).running) throw new SandboxLost(target.name, new Error(`pod ${target.containerId} is not running`));
  }

  async deletePod(name: string, wait: boolean): Promise<boolean> {
    this.unconfirmed.delete(name);
    this.channels.get(name)?.close();
    try {
      await this.core.deleteNamespacedPod({ name, namespace: this.namespace, gracePeriodSeconds: 0 });
    } catch (err) {
      if (statusCode(err) === 404) return false;
      throw new SandboxLost(name, err);
    }
    while (wait && (await this.readPod(name))) await new Promise((r) => setTimeout(r, 250));
    return true;
  }

  async remove(sandbox: Pick<LabelledSandbox, 'name' | 'kind'>): Promise<{ removed: boolean }> {
    if (sandbox.kind === 'group') return { removed: await removeGroupPod(this, sandbox.name) };
    return { removed: await this.deletePod(podName(sandbox.name), false) };
  }

  async listByLabel(labels: readonly string[]): Promise<LabelledSandbox[]> {
    let pods: V1Pod[];
    try {
      pods = (await this.core.listNamespacedPod({ namespace: this.namespace, labelSelector: MANAGED_LABEL })).items;
    } catch (err) {
      throw new SandboxLost(CLUSTER, err);
    }
    const wanted = labels.length > 0 ? labels : [LABEL_WORKFLOW];
    return pods
      .filter((p) => !p.metadata?.deletionTimestamp)
      .filter((p) => wanted.every((l) => {
        const [key, ...rest] = l.split('=');
        const value = p.metadata?.annotations?.[key!];
        return rest.length === 0 ? value !== undefined : value === rest.join('=');
      }))
      .map((p) => {
        const group = p.metadata?.labels?.[MANAGED_LABEL] === 'group' ? p.metadata.annotations?.[ANNOTATION_GROUP] : undefined;
        return { name: group ?? this.handleOf(p).name, kind: group ? 'group' as const : 'single' as const, workflowId: p.metadata?.annotations?.[LABEL_WORKFLOW] ?? '' };
      });
  }

  /** From the registry the cluster pulls from (no engine beside the worker need have the image). */
  imageConfiguration(ref: string): Promise<ImageConfig | null> {
    return this.registry.imageConfiguration(ref);
  }
}

