import { describe, expect, it } from 'vitest';
import { callsByKind, execLabel, kubeCallKind } from '../../bench/profile/kube-calls.ts';

const execPath = (argv: string[]) => `/api/v1/namespaces/ns/pods/p-1/exec?${argv.map((a) => `command=${encodeURIComponent(a)}`).join('&')}&container=main&stdout=true`;

describe('Kubernetes API calls by kind (bench/profile/kube-calls.ts)', () => {
  it.each([
    ['GET', '/api/v1/namespaces/ns/pods/p-1', 'GET pods/{name}'],
    ['POST', '/api/v1/namespaces/ns/pods', 'POST pods'],
    ['GET', '/api/v1/namespaces/ns/pods?watch=true&fieldSelector=metadata.name%3Dp-1', 'WATCH pods'],
    ['PUT', '/apis/coordination.k8s.io/v1/namespaces/ns/leases/berth-slot-abc-3', 'PUT leases/{name}'],
    ['GET', '/api/v1/namespaces/ns/pods/p-1/log?container=main', 'GET pods/{name}/log'],
    ['GET', '/version', 'GET version'],
    ['GET', '/api/v1/namespaces/ns/pods/p-1/attach?container=main&stdin=true&stdout=true&tty=false', 'ATTACH pods/{name}'],
  ])('%s %s is %s', (method, path, kind) => {
    expect(kubeCallKind(method, path)).toBe(kind);
  });

  it('tells execs apart by what they run, the driver\'s wrapping looked through', () => {
    expect(kubeCallKind('GET', execPath(['sh', '-c', 'mkdir -p -- "$1" && exec tar -x -f - -C "$1"', 'sh', '/app']))).toBe('EXEC tar-over-exec put');
    expect(execLabel(['tar', '-c', '-f', '-', '-C', '/logs', 'verifier'])).toBe('tar-over-exec get');
    expect(execLabel(['sh', '-c', 'for f in /proc/[0-9]*/cmdline; do [ "$x" = "sleep infinity " ] && exit 0; done; exit 1'])).toBe('keep-alive check');
    expect(execLabel(['sh', '-c', 'cd "$1" && shift && exec "$@"', '/app', 'bash', '-c', 'bash /tests/test.sh > /logs/x'])).toBe('script: bash /tests/test.sh > /logs/x');
    expect(execLabel(['/bin/sh', '-c', 'set -e\n: > /logs/.berth-seeded'])).toBe('script: : > /logs/.berth-seeded');
  });

  it('counts each kind and sums its time, most frequent first', () => {
    const at = 0;
    expect(callsByKind([
      { at, ms: 5, method: 'GET', path: '/api/v1/namespaces/ns/pods/a' },
      { at, ms: 7, method: 'GET', path: '/api/v1/namespaces/ns/pods/b' },
      { at, ms: 3, method: 'POST', path: '/api/v1/namespaces/ns/pods' },
    ])).toEqual([{ kind: 'GET pods/{name}', n: 2, ms: 12 }, { kind: 'POST pods', n: 1, ms: 3 }]);
  });
});
