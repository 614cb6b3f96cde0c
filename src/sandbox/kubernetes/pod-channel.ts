// Commands without an exec on Kubernetes (issue 40; docs/kubernetes.md, The exec channel). An exec costs the apiserver,
// the kubelet, containerd and a runc process joining the container: about 0.06 CPU-s of this machine each, and a
// trivial episode made two. A single sandbox's keep-alive also runs the request loop of channel-protocol.ts on the
// container's stdin (pod-spec.ts channelKeepAlive); the worker that created the pod keeps one attach to it and sends
// its commands there, as the Docker driver does (docker/exec-channel.ts). Every command the driver would exec goes
// there, under the same launcher (pod-spec.ts execArgv: user, working directory, environment, budget), except copies
// (tar over exec, with stdin). A pod this process did not create, or whose loop ended, is reached through exec.
import { Attach, type KubeConfig } from '@kubernetes/client-node';
import { PassThrough, Writable } from 'node:stream';
import type WebSocket from 'isomorphic-ws';
import { CHANNEL_ENDED, ChannelParser, ChannelRequests, type ChannelAnswer } from '../channel-protocol.ts';
import { shellQuote } from '../names.ts';
import type { PodContainer } from './exec.ts';

/** What a request prints, alone on its first line, when the launcher's first program is not in the container. */
export const NOT_FOUND_MARK = 'berth:no-launcher';

/** The request for a launcher argv: as an exec would run it, the runtime's "not found" kept apart (podRefusedStart). */
export function launcherScript(launcher: readonly string[]): string {
  const first = launcher[0] ?? '';
  return `command -v ${shellQuote(first)} >/dev/null 2>&1 || { echo ${NOT_FOUND_MARK}; exit 127; }\nexec ${launcher.map(shellQuote).join(' ')}\n`;
}

/** Why a command sent on the channel got no answer: the attach or the loop ended first (the command may have run). */
export class ChannelEnded extends Error {
  constructor(readonly target: PodContainer, why: string) {
    super(`the keep-alive's channel of ${target.namespace}/${target.pod} ended before the command answered: ${why}`);
    this.name = 'ChannelEnded';
  }
}

export class PodChannel {
  private readonly requests = new ChannelRequests((request) => this.stdin.write(request), (on) => this.hold(on));
  private readonly parser = new ChannelParser((line) => { if (line === CHANNEL_ENDED) this.close('its loop ended'); });
  private readonly stdin = new PassThrough();
  private ws: WebSocket.WebSocket | undefined;
  private closed = false;
  /** True once the loop answered from this pod's container (its setup done); false when the channel ended first. */
  readonly ready: Promise<boolean>;

  /** `check`: a script that exits 0 only in this pod's container (the first request, before any command). */
  constructor(kc: KubeConfig, private readonly target: PodContainer, check: string, private readonly onClose: () => void) {
    this.ready = this.connect(kc, check);
  }

  get open(): boolean {
    return !this.closed;
  }

  private async connect(kc: KubeConfig, check: string): Promise<boolean> {
    const output = new Writable({ write: (chunk: Buffer, _e, done) => { this.output(chunk); done(); } });
    try {
      const { namespace, pod, container } = this.target;
      this.ws = await new Attach(kc).attach(namespace, pod, container, output, null, this.stdin, false);
    } catch {
      this.close('could not attach');
      return false;
    }
    if (this.closed) {
      this.ws.close();
      return false;
    }
    this.ws.on('close', () => this.close('the attach closed'));
    this.ws.on('error', () => this.close('the attach failed'));
    this.hold(false);
    try {
      const answer = await this.send(check, 1024, undefined);
      if (answer !== 'guard' && answer.exitCode === 0) return true;
    } catch {
      return false;
    }
    this.close('not this pod\'s container');
    return false;
  }

  private output(chunk: Buffer): void {
    this.requests.answered(this.parser.push(chunk));
  }

  /** While nothing waits on it, the attach does not keep this process running. */
  private hold(on: boolean): void {
    const socket = (this.ws as unknown as { _socket?: { ref(): void; unref(): void } } | undefined)?._socket;
    if (on) socket?.ref(); else socket?.unref();
  }

  private send(script: string, cap: number, timeoutSec: number | undefined, signal?: AbortSignal): Promise<ChannelAnswer | 'guard'> {
    if (this.closed) return Promise.reject(new ChannelEnded(this.target, 'it had ended'));
    return this.requests.request(script, cap, timeoutSec, signal);
  }

  /**
   * A launcher argv (pod-spec.ts execArgv), answered with the last `cap` bytes of each stream; 'guard' when no answer
   * came within the budget and its grace (the command's processes killed by something in the sandbox, say).
   */
  run(launcher: readonly string[], cap: number, timeoutSec: number | undefined, signal?: AbortSignal): Promise<ChannelAnswer | 'guard'> {
    return this.send(launcherScript(launcher), cap, timeoutSec, signal);
  }

  /** The attach ended (the pod went, the worker let go) or the loop did: every command waiting fails. */
  close(why = 'closed by this worker'): void {
    if (this.closed) return;
    this.closed = true;
    this.onClose();
    this.ws?.close();
    this.requests.failAll(() => new ChannelEnded(this.target, why));
  }
}
