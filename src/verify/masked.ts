// A verification that cannot produce a verdict: the row is masked with a kind and a reason.
import { SandboxLost } from '../sandbox/index.ts';
import type { FailureKind } from '../outcomes/failure-kinds.ts';

export type MaskKind = Extract<FailureKind, 'verifier_error' | 'provider_unavailable' | 'harbor:seed_failed'>;

export class VerificationMasked extends Error {
  override readonly name = 'VerificationMasked';
  constructor(
    readonly kind: MaskKind,
    readonly reason: string,
  ) {
    super(reason);
  }
}

function describe(err: unknown): string {
  return err instanceof Error ? err.message.trim() : String(err);
}

/** A transfer that failed: the sandbox's loss, or a broken copy; either way the row is masked. */
export function transferFailed(what: string, err: unknown): VerificationMasked {
  const lost = err instanceof SandboxLost;
  return new VerificationMasked('provider_unavailable', `${what} failed${lost ? ' (sandbox lost)' : ''}: ${describe(err)}`);
}

/** Runs a transfer, masking any failure of it as provider_unavailable. */
export async function transfer<T>(what: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof VerificationMasked) throw err;
    throw transferFailed(what, err);
  }
}
