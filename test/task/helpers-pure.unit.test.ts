// The small pure helpers other layers import: templating, image aliases, canary lines, sizes.
import { describe, expect, it } from 'vitest';
import { applyImageAlias, normaliseImageRef, parseImageAliases, parseSizeToMb, stripCanary, templateEnv } from '../../src/task/index.ts';

describe('templateEnv (task-folder-format.md § Environment: env)', () => {
  const rows: Array<[string, Record<string, string>, Record<string, string | undefined>, ReturnType<typeof templateEnv>]> = [
    ['literal values pass through', { A: 'x', B: 'a ${NOT} whole' }, {}, { values: { A: 'x', B: 'a ${NOT} whole' } }],
    ['${NAME} reads the host', { A: '${H}' }, { H: 'v' }, { values: { A: 'v' } }],
    ['an unset ${NAME} is missing, naming its key', { A: '${H}' }, {}, { missing: 'H', key: 'A' }],
    ['${NAME} set to empty is empty', { A: '${H}' }, { H: '' }, { values: { A: '' } }],
    ['${NAME:-d} defaults when unset', { A: '${H:-d}' }, {}, { values: { A: 'd' } }],
    ['${NAME:-d} defaults when empty', { A: '${H:-d}' }, { H: '' }, { values: { A: 'd' } }],
    ['${NAME:-d} reads the host when set', { A: '${H:-d}' }, { H: 'v' }, { values: { A: 'v' } }],
    ['${NAME:-} may default to empty', { A: '${H:-}' }, {}, { values: { A: '' } }],
  ];
  for (const [name, table, env, want] of rows) it(name, () => expect(templateEnv(table, env)).toEqual(want));

  it('sources are checked in order (secrets first)', () => {
    expect(templateEnv({ K: '${K}' }, [{ K: 'secret' }, { K: 'host' }])).toEqual({ values: { K: 'secret' } });
    expect(templateEnv({ K: '${K}' }, [{}, { K: 'host' }])).toEqual({ values: { K: 'host' } });
  });
});

describe('applyImageAlias (DESIGN.md § 4, Images without a registry)', () => {
  const aliases = { 'ubuntu:24.04': 'berth-base:bookworm', 'python:3.12-slim': 'berth-base:bookworm', 'ghcr.io/x/y': 'mirror/y:latest' };
  const rows: Array<[string, string]> = [
    ['ubuntu:24.04', 'berth-base:bookworm'],
    ['docker.io/library/ubuntu:24.04', 'berth-base:bookworm'],
    ['library/ubuntu:24.04', 'berth-base:bookworm'],
    ['ubuntu:22.04', 'ubuntu:22.04'],
    ['ghcr.io/x/y:latest', 'mirror/y:latest'],
    ['ghcr.io/x/y', 'mirror/y:latest'],
    ['localhost:5000/img', 'localhost:5000/img'],
  ];
  for (const [ref, want] of rows) it(`${ref} → ${want}`, () => expect(applyImageAlias(ref, aliases)).toBe(want));
  it('normalises Docker Hub references', () => {
    expect(normaliseImageRef('ubuntu')).toBe('ubuntu:latest');
    expect(normaliseImageRef('localhost:5000/img')).toBe('localhost:5000/img:latest');
    expect(normaliseImageRef('img@sha256:abc')).toBe('img@sha256:abc');
  });
  it('parses FROM=TO and refuses a malformed one', () => {
    expect(parseImageAliases(['a:1=b:2'])).toEqual({ 'a:1': 'b:2' });
    expect(() => parseImageAliases(['nope'])).toThrow(/FROM=TO/);
  });
});

describe('stripCanary (task-folder-format.md § Task folder layout)', () => {
  const rows: Array<[string, string, string]> = [
    ['no canary', 'Hello\n', 'Hello\n'],
    ['a # canary line', '# BENCHMARK canary GUID abc\nHello\n', 'Hello\n'],
    ['an HTML comment canary', '<!-- canary GUID abc -->\n\nHello\n', 'Hello\n'],
    ['a multi-line HTML comment canary', '<!--\nBENCHMARK DATA\ncanary GUID abc\n-->\nHello\n', 'Hello\n'],
    ['a heading without canary stays', '# Title\nHello\n', '# Title\nHello\n'],
    ['a canary line after text stays', 'Hello\n# canary\n', 'Hello\n# canary\n'],
    ['a comment without canary stays', '<!-- note -->\nHello\n', '<!-- note -->\nHello\n'],
  ];
  for (const [name, input, want] of rows) it(name, () => expect(stripCanary(input)).toBe(want));
});

describe('parseSizeToMb (harbor-behaviour.md § 1 Legacy keys)', () => {
  const rows: Array<[string, number | null]> = [
    ['2G', 2048],
    ['10G', 10240],
    ['512M', 512],
    ['1024K', 1],
    ['1.5G', 1536],
    ['2g', 2048],
    ['2GB', 2048],
    ['2', null],
    ['2T', null],
    ['lots', null],
  ];
  for (const [text, want] of rows) it(`${text} → ${want}`, () => expect(parseSizeToMb(text)).toBe(want));
});
