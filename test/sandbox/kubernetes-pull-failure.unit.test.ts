// When a failed image pull ends a pod's seed (src/sandbox/kubernetes/pull-failure.ts): an authorization refusal with
// a pull secret is waited on while the kubelet may not have read the new Secret yet; everything else ends it at once.
import { describe, expect, it } from 'vitest';
import { AUTH_PULL_GRACE_MS, pullFailureIsFinal } from '../../src/sandbox/kubernetes/pull-failure.ts';

const ANON_401 = 'failed to authorize: failed to fetch anonymous token: unexpected status: 401 Unauthorized';

describe('pullFailureIsFinal', () => {
  it.each([
    { what: 'no pull failure', reason: 'ContainerCreating', message: '', secret: true, ms: 0, final: false },
    { what: 'no reason at all', reason: '', message: '', secret: false, ms: 0, final: false },
    { what: 'an image that is not there', reason: 'ErrImagePull', message: 'not found', secret: true, ms: 0, final: true },
    { what: 'a 401 without a pull secret', reason: 'ErrImagePull', message: ANON_401, secret: false, ms: 0, final: true },
    { what: 'a 401 with a pull secret, at first', reason: 'ErrImagePull', message: ANON_401, secret: true, ms: 0, final: false },
    { what: 'a 401 with a pull secret, backing off', reason: 'ImagePullBackOff', message: 'Back-off pulling image: 401 Unauthorized', secret: true, ms: AUTH_PULL_GRACE_MS - 1, final: false },
    { what: 'a 401 with a pull secret, after the grace', reason: 'ErrImagePull', message: ANON_401, secret: true, ms: AUTH_PULL_GRACE_MS, final: true },
    { what: 'a bad name, even with a pull secret', reason: 'InvalidImageName', message: 'unauthorized', secret: true, ms: 0, final: true },
  ])('$what: final $final', ({ reason, message, secret, ms, final }) => {
    expect(pullFailureIsFinal({ reason, message, hasPullSecret: secret, failingForMs: ms })).toBe(final);
  });
});
