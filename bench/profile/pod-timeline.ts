// When each pod of a namespace was created, first shown running, asked to be deleted and gone, from one watch: whether
// 32 episodes really hold 32 pods at once, or their pods come in waves.
import { type KubeConfig, type V1Pod, Watch } from '@kubernetes/client-node';

export interface PodTimes { created: number; running?: number; deleting?: number; gone?: number }

export class PodTimeline {
  readonly pods = new Map<string, PodTimes>();
  private request: { abort(): void } | undefined;

  async start(kc: KubeConfig, namespace: string): Promise<void> {
    const see = (type: string, pod: V1Pod) => {
      const name = pod.metadata?.name;
      if (!name) return;
      const now = Date.now();
      const t = this.pods.get(name) ?? { created: now }; // the watch's first sight (creationTimestamp has whole seconds)
      this.pods.set(name, t);
      if (t.running === undefined && pod.status?.containerStatuses?.some((c) => c.state?.running)) t.running = now;
      if (t.deleting === undefined && pod.metadata?.deletionTimestamp) t.deleting = now;
      if (type === 'DELETED') t.gone = now;
    };
    this.request = await new Watch(kc).watch(`/api/v1/namespaces/${namespace}/pods`, { resourceVersion: '0' }, see, () => undefined);
  }

  stop(): void {
    this.request?.abort();
  }

  /** The pods created since `from` (ms since the epoch), as one line: quantiles of each moment and the most at once. */
  summary(from: number): string {
    const pods = [...this.pods.values()].filter((t) => t.created >= from - 1000);
    if (pods.length === 0) return 'no pods';
    return podSummary(pods, from);
  }
}

/** Pure: first/median/last of each moment (s from `from`), the most pods existing at once, and creation to running. */
export function podSummary(pods: PodTimes[], from: number): string {
  const q = (xs: Array<number | undefined>) => {
    const s = xs.filter((x): x is number => x !== undefined).sort((a, b) => a - b);
    return s.length ? [0, 0.5, 1].map((f) => ((s[Math.round(f * (s.length - 1))]! - from) / 1000).toFixed(2)).join('/') : '-';
  };
  const moments = pods.flatMap((p) => [{ at: p.created, d: 1 }, ...(p.gone !== undefined ? [{ at: p.gone, d: -1 }] : [])]).sort((a, b) => a.at - b.at || a.d - b.d);
  let now = 0;
  let most = 0;
  for (const m of moments) most = Math.max(most, (now += m.d));
  const toRunning = pods.filter((p) => p.running !== undefined).map((p) => p.running! - p.created).sort((a, b) => a - b);
  const mid = toRunning[Math.floor(toRunning.length / 2)];
  return `${pods.length} pods, most at once ${most}; created ${q(pods.map((p) => p.created))}, shown running ${q(pods.map((p) => p.running))}, ` +
    `deletion asked ${q(pods.map((p) => p.deleting))}, gone ${q(pods.map((p) => p.gone))} (first/median/last, s); created to shown running, median ${mid === undefined ? '-' : (mid / 1000).toFixed(2)} s`;
}
