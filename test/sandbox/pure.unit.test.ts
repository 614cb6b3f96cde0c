import { describe, expect, it } from 'vitest';
import { imageContentHash, imageTagForHash, type ContextFile } from '../../src/sandbox/image-hash.ts';
import { containerName } from '../../src/sandbox/names.ts';

const DOCKER_NAME = /^[a-zA-Z0-9][a-zA-Z0-9_.-]+$/;

describe('containerName', () => {
  it.each([
    ['berth/b1/hello-world/0', 'r1', 'agent'],
    ['berth/b1/hello world/ä/0~a2', 'r1', 'verifier'],
    ['///', '', 'agent'],
    [`berth/${'x'.repeat(300)}/0`, 'run', 'agent'],
  ] as const)('%s is a valid, bounded Docker name', (wf, run, role) => {
    const name = containerName(wf, run, role);
    expect(name).toMatch(DOCKER_NAME);
    expect(name.length).toBeLessThanOrEqual(120);
    expect(name).toContain(role);
    expect(containerName(wf, run, role)).toBe(name);
  });

  it('differs by run id and role, even when the readable part is the same', () => {
    const names = new Set([
      containerName('berth/b/t/0', 'r1', 'agent'),
      containerName('berth/b/t/0', 'r2', 'agent'),
      containerName('berth/b/t/0', 'r1', 'verifier'),
      containerName('berth/b/t 0', 'r1', 'agent'),
      containerName('berth/b/t-0', 'r1', 'agent'),
    ]);
    expect(names.size).toBe(5);
  });
});

const file = (path: string, content: string, mode = 0o644): ContextFile => ({
  path,
  mode,
  type: 'file',
  content: Buffer.from(content),
});

describe('imageContentHash', () => {
  const base = {
    files: [file('Dockerfile', 'FROM x\n'), file('run.sh', 'echo\n', 0o755)],
    aliases: { 'ubuntu:22.04': 'berth-base:bookworm' },
    buildSettings: { network: 'default' },
  };
  const h = imageContentHash(base);

  it('is stable and ignores file order and key order', () => {
    expect(h).toMatch(/^[0-9a-f]{64}$/);
    expect(
      imageContentHash({
        files: [...base.files].reverse(),
        aliases: { ...base.aliases },
        buildSettings: { network: 'default' },
      }),
    ).toBe(h);
  });

  it.each([
    ['a content change', { ...base, files: [file('Dockerfile', 'FROM y\n'), base.files[1]!] }],
    ['a mode change', { ...base, files: [base.files[0]!, file('run.sh', 'echo\n', 0o644)] }],
    ['a rename', { ...base, files: [base.files[0]!, file('go.sh', 'echo\n', 0o755)] }],
    ['an alias change', { ...base, aliases: { 'ubuntu:22.04': 'other:1' } }],
    ['a build setting change', { ...base, buildSettings: { network: 'none' } }],
  ])('changes with %s', (_what, input) => {
    expect(imageContentHash(input)).not.toBe(h);
  });

  it('makes hb__ tags from a lowercase hex prefix', () => {
    expect(imageTagForHash(h)).toBe(`hb__${h.slice(0, 20)}`);
    expect(imageTagForHash(h, '-verifier')).toBe(`hb__${h.slice(0, 20)}-verifier`);
  });
});
