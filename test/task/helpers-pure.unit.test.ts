// The small pure helpers other layers import: templating, image aliases, canary lines, sizes.
import { describe, expect, it } from 'vitest';
import { applyImageAlias, MIN_REDACTED_HOST_VALUE, normaliseImageRef, parseImageAliases, parseSizeToMb, resolveTemplates, stripCanary } from '../../src/task/index.ts';

// The one resolver of every env table: [environment].env, [solution].env, [verifier].env and [steps.verifier].env
// (with [secrets]), and the planner's unset-variable check (docs/design.md section 7 "Secrets"; Task Folder Format § Environment).
describe('resolveTemplates (Task Folder Format § Environment: env; docs/design.md section 7 Secrets)', () => {
  type Row = [string, Record<string, string>, Record<string, string | undefined>, Record<string, string>, ReturnType<typeof resolveTemplates>];
  const rows: Row[] = [
    ['literal values pass through, never sensitive', { A: 'x-literal', B: 'a ${NOT} whole' }, {}, {}, { ok: true, values: { A: 'x-literal', B: 'a ${NOT} whole' }, sensitive: [] }],
    ['${NAME} reads the host; a host value is sensitive', { A: '${H}' }, { H: 'value' }, {}, { ok: true, values: { A: 'value' }, sensitive: ['value'] }],
    ['an unset ${NAME} stops, naming its key and variable', { A: 'x', B: '${H}' }, {}, {}, { ok: false, key: 'B', variable: 'H' }],
    ['${NAME} set to empty is empty (and hides nothing)', { A: '${H}' }, { H: '' }, {}, { ok: true, values: { A: '' }, sensitive: [] }],
    ['${NAME:-d} defaults when unset; a default is not a secret', { A: '${H:-dflt}' }, {}, {}, { ok: true, values: { A: 'dflt' }, sensitive: [] }],
    ['${NAME:-d} defaults when empty', { A: '${H:-dflt}' }, { H: '' }, {}, { ok: true, values: { A: 'dflt' }, sensitive: [] }],
    ['${NAME:-d} reads the host when set', { A: '${H:-dflt}' }, { H: 'host-value' }, {}, { ok: true, values: { A: 'host-value' }, sensitive: ['host-value'] }],
    ['${NAME:-} may default to empty', { A: '${H:-}' }, {}, {}, { ok: true, values: { A: '' }, sensitive: [] }],
    ['[secrets] win over the host', { A: '${S}' }, { S: 'host-value' }, { S: 'secret-value' }, { ok: true, values: { A: 'secret-value' }, sensitive: ['secret-value'] }],
    ['a secret is sensitive however short', { A: '${S}' }, {}, { S: '1' }, { ok: true, values: { A: '1' }, sensitive: ['1'] }],
    ['a short host value is not redacted (it would mangle logs)', { A: '${H}' }, { H: '64' }, {}, { ok: true, values: { A: '64' }, sensitive: [] }],
    [`a host value of ${MIN_REDACTED_HOST_VALUE} characters is`, { A: '${H}' }, { H: 'abcd' }, {}, { ok: true, values: { A: 'abcd' }, sensitive: ['abcd'] }],
    ['an empty secret takes the default', { A: '${S:-dflt}' }, { S: 'host-value' }, { S: '' }, { ok: true, values: { A: 'dflt' }, sensitive: [] }],
    ['a name only [secrets] sets is unset where [secrets] do not count', { A: '${S}' }, {}, {}, { ok: false, key: 'A', variable: 'S' }],
    ['a name of Object.prototype is not a secret', { A: '${toString}' }, {}, {}, { ok: false, key: 'A', variable: 'toString' }],
  ];
  it.each(rows)('%s', (_name, table, host, secrets, want) => expect(resolveTemplates(table, host, secrets)).toEqual(want));
});

describe('applyImageAlias (docs/design.md section 4, Images without a registry)', () => {
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

describe('stripCanary (Task Folder Format § Task folder layout)', () => {
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

// Issue 37: as Harbor 0.25's EnvironmentConfig._parse_size_to_mb converts them (its source, and `harbor trials start`
// on a task with memory = "1.9G": the container's limit was 2039480320 bytes, 1945 MiB). Harbor truncates and reads
// only a trailing G, M or K: "2GB" and "2Gi" fail its loader.
describe('parseSizeToMb (Harbor 0.25 Legacy keys)', () => {
  const rows: Array<[string, number | null]> = [
    ['2G', 2048],
    ['10G', 10240],
    ['512M', 512],
    ['1024K', 1],
    ['1.5G', 1536],
    ['1.9G', 1945],
    ['1536K', 1],
    ['512K', 0],
    ['2g', 2048],
    [' 2 g ', 2048],
    ['.5G', 512],
    ['1e1M', 10],
    ['1_024M', 1024],
    ['2GB', null],
    ['2Gi', null],
    ['2', null],
    ['2T', null],
    ['lots', null],
    ['G', null],
    ['infG', null],
  ];
  for (const [text, want] of rows) it(`${text} → ${want}`, () => expect(parseSizeToMb(text)).toBe(want));
});
