// A bound on the engine calls that answer in seconds when the engine is well (a single sandbox's image read, create,
// attach, start, rename and removal; an exec's create, start and inspect; a Compose group's inspect, listings and
// removal; the janitor's listings).
// Docker 20.10 can deadlock under container churn (docs/performance-notes.md, 2026-12-04 evening): its calls then
// never answer, and without a bound an episode would wait out its activity's whole time limit, every attempt.

/** How long one of those calls may go unanswered before the engine counts as lost. */
export const ENGINE_ANSWER_SEC = 120;

/** The engine did not answer a call in time: a loss (its code is a connection's: connectionLost), so the episode is masked, not failed. */
export class EngineSilent extends Error {
  override readonly name = 'EngineSilent';
  readonly code = 'ETIMEDOUT';
  constructor(what: string, sec: number) {
    super(`the Docker engine did not answer ${what} within ${sec} s: it may be hung (Docker 20.10 can deadlock under container churn; restart dockerd)`);
  }
}

/** `call` with a signal that aborts it after `sec` seconds; an aborted call rejects with EngineSilent. */
export async function answeredWithin<T>(what: string, sec: number, call: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), sec * 1000);
  try {
    return await call(abort.signal);
  } catch (err) {
    throw abort.signal.aborted ? new EngineSilent(what, sec) : err;
  } finally {
    clearTimeout(timer);
  }
}

/** answeredWithin with `sec` fixed, for a function that makes several bounded calls. */
export const boundedBy = (sec: number) => <T>(what: string, call: (signal: AbortSignal) => Promise<T>): Promise<T> => answeredWithin(what, sec, call);

/**
 * A call that cannot take a signal (an attach hands back a long-lived stream): after `sec` seconds it counts as
 * unanswered, and what it hands back later is given to `discard`.
 */
export function settledWithin<T>(what: string, sec: number, call: Promise<T>, discard: (late: T) => void): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  let late = false;
  const bound = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => { late = true; reject(new EngineSilent(what, sec)); }, sec * 1000);
  });
  void call.then((value) => { if (late) discard(value); }, () => undefined);
  return Promise.race([call, bound]).finally(() => clearTimeout(timer));
}
