import { SingleBar } from 'cli-progress';
import type { BatchHandle } from '../client/batch.ts';
import type { BatchProgress } from '../workflows/types.ts';

export function progressLine(p: BatchProgress): string {
  const mean = p.scored > 0 ? (p.rewardSum / p.scored).toFixed(3) : '-';
  return `${p.done}/${p.total} done · ${p.running} running · ${p.scored} scored · ${p.masked} masked${p.failed ? ` · ${p.failed} failed` : ''} · mean reward ${mean}`;
}

/** A live bar on a terminal, fed by the batch workflow's progress query; stops when told. */
export function liveProgress(handle: BatchHandle): { stop(): Promise<void> } {
  const bar = new SingleBar({
    format: ' {bar} {value}/{total} | {running} running | {scored} scored | {masked} masked | mean {mean} | ETA {eta_formatted}',
    hideCursor: true, clearOnComplete: false, etaBuffer: 20,
  });
  let started = false;
  const tick = async () => {
    const p = await handle.progress().catch(() => undefined);
    if (!p) return;
    const payload = { running: p.running, scored: p.scored, masked: p.masked, mean: p.scored ? (p.rewardSum / p.scored).toFixed(3) : '-' };
    if (!started) { bar.start(p.total, p.done, payload); started = true; } else bar.update(p.done, payload);
  };
  void tick();
  const timer = setInterval(() => void tick(), 1000);
  return {
    async stop() {
      clearInterval(timer);
      await tick();
      if (started) bar.stop();
    },
  };
}
