import { describe, expect, it } from 'vitest';
import { cpuHints, entrypointCommand, healthcheckFromImage } from '../../src/verify/verifier-image-config.ts';

describe('verifier image configuration on record', () => {
  it('runs the ENTRYPOINT with sh -c "sleep infinity" in place of CMD; none when unset or []', () => {
    expect(entrypointCommand(['/entry.sh', '--flag'])).toEqual(['/entry.sh', '--flag', 'sh', '-c', 'sleep infinity']);
    expect(entrypointCommand('/entry.sh')).toEqual(['/entry.sh', 'sh', '-c', 'sleep infinity']);
    expect(entrypointCommand([])).toBeNull();
    expect(entrypointCommand(null)).toBeNull();
  });

  it('reads HEALTHCHECK (ns durations, Docker defaults for zero), CMD and CMD-SHELL; NONE is none', () => {
    expect(healthcheckFromImage({ Test: ['CMD-SHELL', 'test -f /ready'], Interval: 2e9, Retries: 5 })).toEqual({
      command: 'test -f /ready',
      intervalSec: 2,
      timeoutSec: 30,
      startPeriodSec: 0,
      startIntervalSec: 5,
      retries: 5,
    });
    expect(healthcheckFromImage({ Test: ['CMD', 'test', '-f', "/a b"] })?.command).toBe("'test' '-f' '/a b'");
    expect(healthcheckFromImage({ Test: ['NONE'] })).toBeNull();
    expect(healthcheckFromImage(undefined)).toBeNull();
  });

  it('CPU-count hints for a CPU limit, rounded up; the image ENV on record wins', () => {
    expect(cpuHints(1.5)).toEqual({ OMP_NUM_THREADS: '2', MKL_NUM_THREADS: '2', OPENBLAS_NUM_THREADS: '2', NUMEXPR_NUM_THREADS: '2' });
    expect(cpuHints(2, ['OMP_NUM_THREADS'])).toEqual({ MKL_NUM_THREADS: '2', OPENBLAS_NUM_THREADS: '2', NUMEXPR_NUM_THREADS: '2' });
    expect(cpuHints(null)).toEqual({});
  });
});
