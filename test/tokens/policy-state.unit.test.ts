// The policy state a gateway follows: a local one set by hand, and a remote one read in the background, one loop
// per run however many scopes use it, held calls released when a read says the drain is over.
import { describe, expect, it } from 'vitest';
import { initialPolicyState, LocalPolicyState, PolicyStateHub, policyStateOf, type PolicyState } from '../../src/tokens/index.ts';

const STATE: PolicyState = { version: 1, draining: false, endpoint: { baseUrl: 'http://e', model: 'm' }, sampling: {} };

describe('LocalPolicyState', () => {
  it('answers at once unless draining; a held caller gets the state in force at resume', async () => {
    const s = new LocalPolicyState(STATE);
    expect(await s.whenOpen()).toMatchObject({ version: 1 });
    s.drain();
    const held = s.whenOpen();
    s.set({ version: 2 });
    s.resume();
    expect(await held).toMatchObject({ version: 2, draining: false });
  });

  it('a held caller that goes away is rejected and forgotten', async () => {
    const s = new LocalPolicyState({ ...STATE, draining: true });
    const gone = new AbortController();
    const held = s.whenOpen(gone.signal);
    gone.abort(new Error('agent left'));
    await expect(held).rejects.toThrow('agent left');
  });
});

describe('PolicyStateHub', () => {
  it('reads a run once per refresh for every scope, waits for the first read, and follows a drain to its end', async () => {
    let remote: PolicyState = { ...STATE, version: 4 };
    let reads = 0;
    const hub = new PolicyStateHub({ refreshMs: 5, lingerMs: 0 });
    const read = async () => { reads++; return remote; };
    const a = hub.acquire('run-1', read, STATE);
    const b = hub.acquire('run-1', read, STATE);
    expect(hub.size).toBe(1);
    // The first call waits for the first read, so it is stamped with the run's version, not the episode's start.
    expect((await a.whenOpen()).version).toBe(4);
    remote = { ...remote, draining: true };
    await new Promise((r) => setTimeout(r, 30));
    expect(b.current().draining).toBe(true);
    const held = b.whenOpen();
    remote = { ...remote, draining: false, version: 5 };
    expect((await held).version).toBe(5);
    a.release();
    b.release();
    await new Promise((r) => setTimeout(r, 30));
    expect(hub.size).toBe(0);
    const after = reads;
    await new Promise((r) => setTimeout(r, 30));
    expect(reads).toBe(after);
  });

  it('a failed read keeps the last state', async () => {
    const hub = new PolicyStateHub({ refreshMs: 5, lingerMs: 0 });
    const s = hub.acquire('run-2', () => Promise.reject(new Error('no such workflow')), STATE);
    expect(await s.whenOpen()).toEqual(STATE);
    s.release();
    hub.close();
  });
});

describe('policyStateOf', () => {
  it('takes the run\'s version, endpoint (without /v1), model and drain; the sampling stays the episode\'s', () => {
    const t = { runWorkflowId: 'r', endpoint: 'http://a:8000/v1', model: 'm', version: 1, sampling: { temperature: 0.5 }, apiKeyVar: 'K' };
    expect(initialPolicyState(t)).toEqual({ version: 1, draining: false, sampling: { temperature: 0.5 }, endpoint: { baseUrl: 'http://a:8000', model: 'm', apiKeyVar: 'K' } });
    expect(policyStateOf({ version: 9, endpoint: 'http://b:9000/v1/', model: 'm2', draining: true, seq: 4 }, t))
      .toEqual({ version: 9, draining: true, sampling: { temperature: 0.5 }, endpoint: { baseUrl: 'http://b:9000', model: 'm2', apiKeyVar: 'K' } });
  });
});
