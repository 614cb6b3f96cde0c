import { SingleBar } from 'cli-progress';
import type { BatchHandle } from '../client/batch.ts';
import { slotWaits, slotWaitText, type SlotWait } from '../client/slot-waits.ts';
import type { BatchProgress } from '../client/index.ts';

export function progressLine(p: BatchProgress, waits: SlotWait[] = []): string {
  const mean = p.scored > 0 ? (p.rewardSum / p.scored).toFixed(3) : '-';
  const waiting = waits.length > 0 ? ` · ${slotWaitText(waits)}` : '';
  return `${p.paused ? 'PAUSED · ' : ''}${p.done}/${p.total} done · ${p.running} running${p.concurrency ? ` (window ${p.concurrency})` : ''} · ${p.scored} scored · ${p.masked} masked${p.failed ? ` · ${p.failed} failed` : ''} · mean reward ${mean}${waiting}`;
}

/** How often the live bar asks which episodes wait for a slot (a few describe calls each time). */
const WAITS_EVERY_MS = 5000;

/** A live bar on a terminal, fed by the batch workflow's progress query; stops when told. */
export function liveProgress(handle: BatchHandle): { stop(): Promise<void> } {
  const bar = new SingleBar({
    format: ' {bar} {value}/{total} |{paused} {running} running | {scored} scored | {masked} masked | mean {mean} | ETA {eta_formatted}{waiting}',
    hideCursor: true, clearOnComplete: false, etaBuffer: 20,
  });
  let started = false;
  let waiting = '';
  let waitsAt = 0;
  const tick = async () => {
    const p = await handle.progress().catch(() => undefined);
    if (!p) return;
    if (Date.now() - waitsAt > WAITS_EVERY_MS) {
      waitsAt = Date.now();
      const text = slotWaitText(await slotWaits(handle.client, handle.batchId).catch(() => []));
      waiting = text ? ` | ${text}` : '';
    }
    const payload = { paused: p.paused ? ' PAUSED |' : '', running: p.running, scored: p.scored, masked: p.masked, mean: p.scored ? (p.rewardSum / p.scored).toFixed(3) : '-', waiting };
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
