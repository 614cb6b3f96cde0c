import { describe, expect, it } from 'vitest';
import { parseImageRef, platformArch, platformEntry, registryBaseUrl } from '../../src/sandbox/kubernetes/registry.ts';

// How Docker splits an image reference into registry, repository and tag or digest (docker/distribution's
// reference grammar: the first component is a host when it has a dot or a port or is localhost).
describe('image references as a registry addresses them', () => {
  const digest = `sha256:${'a'.repeat(64)}`;
  it.each([
    ['127.0.0.1:5050/berth/task:1', { host: '127.0.0.1:5050', repository: 'berth/task', reference: '1' }],
    [`127.0.0.1:5050/berth/task@${digest}`, { host: '127.0.0.1:5050', repository: 'berth/task', reference: digest }],
    [`127.0.0.1:5050/berth/task:1@${digest}`, { host: '127.0.0.1:5050', repository: 'berth/task', reference: digest }],
    ['localhost/x', { host: 'localhost', repository: 'x', reference: 'latest' }],
    ['registry.example.com/team/img', { host: 'registry.example.com', repository: 'team/img', reference: 'latest' }],
    ['debian:bookworm', { host: 'registry-1.docker.io', repository: 'library/debian', reference: 'bookworm' }],
    ['team/img:2', { host: 'registry-1.docker.io', repository: 'team/img', reference: '2' }],
  ])('%s', (ref, want) => {
    expect(parseImageRef(ref)).toEqual(want);
  });

  it('refuses a reference with no repository', () => {
    expect(() => parseImageRef('127.0.0.1:5050/')).toThrow(/names no repository/);
  });
});

describe('the registry URL', () => {
  it.each([
    ['127.0.0.1:5050', 'http://127.0.0.1:5050'],
    ['localhost:5000', 'http://localhost:5000'],
    ['registry.example.com', 'https://registry.example.com'],
    ['10.0.0.5:5000', 'https://10.0.0.5:5000'],
  ])('%s', (host, want) => {
    expect(registryBaseUrl(host)).toBe(want);
  });
});

describe('an index entry for this platform', () => {
  const index = {
    manifests: [
      { digest: 'sha256:arm', platform: { os: 'linux', architecture: 'arm64' } },
      { digest: 'sha256:win', platform: { os: 'windows', architecture: 'amd64' } },
      { digest: 'sha256:amd', platform: { os: 'linux', architecture: 'amd64' } },
    ],
  };
  it('takes linux on the architecture asked for', () => {
    expect(platformEntry(index, 'amd64')).toBe('sha256:amd');
    expect(platformEntry(index, 'arm64')).toBe('sha256:arm');
    expect(platformEntry(index, 's390x')).toBeNull();
  });
  it('names node\'s architectures as Go does', () => {
    expect(platformArch('x64')).toBe('amd64');
    expect(platformArch('arm64')).toBe('arm64');
  });
});
