// A trainer's side of berth serve's rollout API in tests: JSON posts, and the NDJSON group stream read like a
// trainer that may lose its connection (a broken stream answers the groups read so far; the caller reconnects).
import type { Group } from '../../src/rollouts/types.ts';

export async function postJson(url: string, body: unknown): Promise<{ status: number; body: any }> {
  const r = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: r.status, body: await r.json() as any };
}

/** Reads `GET <url>/runs/<key>/groups` (after the acknowledged cursor, or `after`) until `count` groups arrived, the stream ends or breaks. */
export async function readGroups(url: string, key: string, count: number, after?: number): Promise<Group[]> {
  const ctl = new AbortController();
  const groups: Group[] = [];
  try {
    const r = await fetch(`${url}/runs/${key}/groups${after === undefined ? '' : `?after=${after}`}`, { signal: ctl.signal });
    const reader = r.body!.getReader();
    const decoder = new TextDecoder();
    let buf = '';
    while (groups.length < count) {
      const { value, done } = await reader.read();
      if (done) break;
      buf += decoder.decode(value, { stream: true });
      for (let nl = buf.indexOf('\n'); nl >= 0; nl = buf.indexOf('\n')) {
        groups.push(JSON.parse(buf.slice(0, nl)) as Group);
        buf = buf.slice(nl + 1);
      }
    }
    await reader.cancel().catch(() => undefined);
  } catch {
    // The connection broke (berth serve or Temporal went away): what arrived whole is kept.
  } finally {
    ctl.abort();
  }
  return groups;
}

/**
 * A trainer that acknowledges each group as it reads it, reconnecting (after its last acknowledged group) whenever the
 * stream breaks, until `count` groups are acknowledged. Answers the acknowledged groups in order, and `redelivered`:
 * groups that came again after they had been acknowledged (exactly-once delivery: always none).
 */
export async function ackGroups(url: string, key: string, count: number, timeoutMs: number): Promise<{ acked: Group[]; redelivered: Group[] }> {
  const deadline = Date.now() + timeoutMs;
  const acked: Group[] = [];
  const redelivered: Group[] = [];
  let unsure: Group | undefined;
  while (acked.length < count) {
    // An ack whose answer was lost may have been applied: the run's cursor says.
    if (unsure) {
      const status = await fetch(`${url}/runs/${key}`).then((r) => r.json() as Promise<{ acked?: number }>, () => undefined);
      if (status?.acked !== undefined && status.acked >= unsure.seq && !acked.some((a) => a.seq >= unsure!.seq)) acked.push(unsure);
      if (status?.acked !== undefined) unsure = undefined;
    }
    if (Date.now() > deadline) throw new Error(`only ${acked.length} of ${count} groups of run ${key} were acknowledged within ${timeoutMs} ms`);
    const got = await readGroups(url, key, count - acked.length);
    for (const g of got) {
      if (acked.some((a) => a.seq >= g.seq)) {
        redelivered.push(g);
        continue;
      }
      if (g.seq === unsure?.seq) unsure = undefined;
      const ack = await postJson(`${url}/runs/${key}/ack`, { seq: g.seq }).catch(() => undefined);
      // An ack lost with the connection: the group comes again on reconnecting, and is acknowledged then.
      if (ack?.status !== 200) {
        unsure = g;
        break;
      }
      acked.push(g);
    }
    if (got.length === 0) await new Promise((r) => setTimeout(r, 500));
  }
  return { acked, redelivered };
}
