import type { V1Status } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { exitCodeOfStatus } from '../../src/sandbox/kubernetes/exec.ts';

// The status frame of the exec API (channel 3) as the kubelet sends it: Success, a NonZeroExitCode failure with
// the code in details.causes, or a failure that is not the command's exit (the container gone, exec refused).
describe('exit code of an exec status', () => {
  const cases: Array<[string, V1Status, number | null]> = [
    ['success', { status: 'Success' }, 0],
    ['a non-zero exit', { status: 'Failure', reason: 'NonZeroExitCode', details: { causes: [{ reason: 'ExitCode', message: '7' }] } }, 7],
    ['exit 137 (killed)', { status: 'Failure', reason: 'NonZeroExitCode', details: { causes: [{ reason: 'ExitCode', message: '137' }] } }, 137],
    ['NonZeroExitCode without a code', { status: 'Failure', reason: 'NonZeroExitCode', details: { causes: [] } }, null],
    ['a code that is not a number', { status: 'Failure', reason: 'NonZeroExitCode', details: { causes: [{ reason: 'ExitCode', message: 'x' }] } }, null],
    ['another failure', { status: 'Failure', reason: 'InternalError', message: 'container not found ("main")' }, null],
  ];
  it.each(cases)('%s', (_what, status, code) => {
    expect(exitCodeOfStatus(status)).toBe(code);
  });
});
