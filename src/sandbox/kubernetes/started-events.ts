// When a pod's container has started, without asking the container: the kubelet's `Started` event, which it posts as
// soon as the runtime has started the container (its status in the pod says `running` only at its next relist, up to a
// second later). One watch per driver on the namespace's `Started` events serves every pod being waited for, so a
// starting pod is asked over exec once, after its event, instead of at every look (each exec is a runc exec on the
// node: under 32 starting pods they were most of the readiness cost). A watch that is refused (a Role without `watch`
// on events) or ends is tried again later; meanwhile `live` is false and the caller asks the container as before.
import type { CoreV1Event, KubeConfig } from '@kubernetes/client-node';
import https from 'node:https';
import { createInterface } from 'node:readline';

/** Pure: the pod uid and container a kubelet `Started` event is about, or undefined for any other event. */
export function startedContainer(event: Pick<CoreV1Event, 'reason' | 'involvedObject'>): { uid: string; container: string } | undefined {
  const o = event.involvedObject;
  if (event.reason !== 'Started' || o?.kind !== 'Pod' || !o.uid) return undefined;
  const m = /^spec\.(?:initContainers|containers|ephemeralContainers)\{([^}]+)\}$/.exec(o.fieldPath ?? '');
  return m ? { uid: o.uid, container: m[1]! } : undefined;
}

/** How long a refused or ended watch is left before it is tried again. */
const RETRY_MS = 15_000;
/** How long a seen start is remembered (a pod waited for is asked about within its start budget). */
const KEEP_MS = 10 * 60_000;

export class StartedEvents {
  private readonly seen = new Map<string, number>();
  private readonly waiters = new Map<string, Set<() => void>>();
  private state: 'off' | 'starting' | 'live' = 'off';
  private retryAt = 0;
  private liveSince = 0;
  private request: { destroy(): void } | undefined;

  constructor(private readonly kubeConfig: KubeConfig, private readonly namespace: string) {}

  /** Whether the watch runs (starting it when it does not): only then does a start not seen mean not started yet. */
  live(): boolean {
    this.ensure();
    return this.state === 'live';
  }

  has(uid: string, container: string): boolean {
    return this.seen.has(`${uid}/${container}`);
  }

  /** Resolves once the container's start is seen, or after `ms` (whichever is first). */
  wait(uid: string, container: string, ms: number): Promise<void> {
    const key = `${uid}/${container}`;
    if (this.seen.has(key)) return Promise.resolve();
    return new Promise((resolve) => {
      const set = this.waiters.get(key) ?? new Set();
      this.waiters.set(key, set);
      const done = () => { clearTimeout(timer); set.delete(done); if (set.size === 0) this.waiters.delete(key); resolve(); };
      const timer = setTimeout(done, ms);
      set.add(done);
    });
  }

  /** Ends the watch (a driver no longer used); a later `live` starts it again. */
  close(): void {
    this.request?.destroy();
    this.request = undefined;
    this.state = 'off';
  }

  private note(event: CoreV1Event): void {
    const started = startedContainer(event);
    if (!started) return;
    const key = `${started.uid}/${started.container}`;
    const now = Date.now();
    this.seen.set(key, now);
    for (const done of [...(this.waiters.get(key) ?? [])]) done();
    if (this.seen.size > 4096) for (const [k, at] of this.seen) if (now - at > KEEP_MS) this.seen.delete(k);
  }

  /** A watch that ran a while and was closed (the apiserver ends them after some minutes) is opened again at the next need; one refused, unreachable or closed at once is left a while. */
  private ended(): void {
    if (this.state === 'off') return;
    this.retryAt = this.state === 'live' && Date.now() - this.liveSince > 5000 ? 0 : Date.now() + RETRY_MS;
    this.state = 'off';
    this.request = undefined;
    // Waiters go back to asking the container.
    for (const set of this.waiters.values()) for (const done of [...set]) done();
  }

  private ensure(): void {
    if (this.state !== 'off' || Date.now() < this.retryAt) return;
    this.state = 'starting';
    this.open().catch(() => this.ended());
  }

  private async open(): Promise<void> {
    const server = this.kubeConfig.getCurrentCluster()?.server;
    if (!server) throw new Error('no current cluster');
    // resourceVersion 0: from the apiserver's cache as it is (an etcd without progress notifications cannot serve a
    // watch from "now" when nothing changed lately); the events already there are remembered like new ones.
    const url = new URL(`${server}/api/v1/namespaces/${encodeURIComponent(this.namespace)}/events`);
    url.searchParams.set('watch', 'true');
    url.searchParams.set('fieldSelector', 'reason=Started');
    url.searchParams.set('resourceVersion', '0');
    url.searchParams.set('allowWatchBookmarks', 'false');
    const opts: https.RequestOptions = {};
    await this.kubeConfig.applyToHTTPSOptions(opts);
    // A connection of its own, which never keeps the process alive.
    const req = https.request(url, { ...opts, agent: false, method: 'GET' });
    this.request = req;
    req.on('socket', (socket) => socket.unref());
    req.on('error', () => this.ended());
    req.on('response', (res) => {
      if (res.statusCode !== 200) {
        res.resume();
        this.ended();
        return;
      }
      if (this.request === req) { this.state = 'live'; this.liveSince = Date.now(); }
      const lines = createInterface({ input: res });
      lines.on('line', (line) => {
        let item: { type?: string; object?: CoreV1Event };
        try { item = JSON.parse(line) as typeof item; } catch { return; }
        if (item.type === 'ERROR') { this.ended(); req.destroy(); return; }
        if (item.object) this.note(item.object);
      });
      res.on('close', () => { if (this.request === req) this.ended(); });
    });
    req.end();
  }
}
