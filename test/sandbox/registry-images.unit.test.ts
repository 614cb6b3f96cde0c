import { describe, expect, it } from 'vitest';
import { sandboxSharedQueue } from '../../src/config/index.ts';
import { registryRepository, registryTag } from '../../src/sandbox/registry-images.ts';

// Where the Kubernetes sandbox pushes a task image (docs/kubernetes.md, images through the registry), and the shared
// queue a sandbox's workers poll (`berth run --sandbox`, `berth worker --sandbox`).

describe('the repository and tag an image is pushed under', () => {
  it.each([
    ['berth-base:bookworm', '127.0.0.1:5050/berth/berth-base'],
    ['hb__0123abcd', '127.0.0.1:5050/berth/hb-0123abcd'],
    ['docker.io/library/python:3.12-slim', '127.0.0.1:5050/berth/python'],
    ['localhost:5000/team/Img@sha256:aa', '127.0.0.1:5050/berth/img'],
    ['sha256:0123456789abcdef0123', '127.0.0.1:5050/berth/image'],
  ])('%s → %s', (name, repo) => {
    expect(registryRepository('127.0.0.1:5050', name)).toBe(repo);
  });

  it('keeps a registry prefix', () => {
    expect(registryRepository('reg.example:443/evals', 'berth-base:bookworm')).toBe('reg.example:443/evals/berth/berth-base');
  });

  it('tags by the image id, so the same image always gets the same tag', () => {
    expect(registryTag('sha256:0123456789abcdef0123456789')).toBe('0123456789abcdef');
  });
});

describe('the shared queue of a sandbox\'s workers', () => {
  it.each([
    ['berth', 'docker', 'berth'],
    ['berth', 'kubernetes', 'berth-kubernetes'],
    ['test-x', 'kubernetes', 'test-x-kubernetes'],
  ])('%s for %s → %s', (shared, sandbox, queue) => {
    expect(sandboxSharedQueue(shared, sandbox)).toBe(queue);
  });
});
