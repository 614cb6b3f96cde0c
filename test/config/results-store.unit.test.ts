// berth.toml [results] (docs/configuration.md, [results]; issue 39, A store setting).
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadBerthConfig } from '../../src/config/index.ts';
import { storeCredentialsOf, storeSettingsOf } from '../../src/config/results-store.ts';

const write = (text: string): string => {
  const file = join(mkdtempSync(join(tmpdir(), 'berth-results-')), 'berth.toml');
  writeFileSync(file, text);
  return file;
};

describe('[results] in berth.toml', () => {
  it('is no store at all when the section is absent: nothing changes', () => {
    expect(storeSettingsOf(loadBerthConfig(write('')).config, {})).toBeNull();
  });

  it.each([
    ['[results]\nstore = "s3://bucket-a"\n', {}, { bucket: 'bucket-a', prefix: '', region: 'us-east-1', pathStyle: false, keepLocal: true }],
    ['[results]\nstore = "s3://bucket-a/team/evals/"\n', { AWS_REGION: 'eu-west-1' },
      { bucket: 'bucket-a', prefix: 'team/evals', region: 'eu-west-1', pathStyle: false, keepLocal: true }],
    // An endpoint (an S3-compatible server) means path-style unless berth.toml says otherwise.
    ['[results]\nstore = "s3://bk1/p"\nendpoint = "http://127.0.0.1:8333/"\n', {},
      { bucket: 'bk1', prefix: 'p', endpoint: 'http://127.0.0.1:8333', region: 'us-east-1', pathStyle: true, keepLocal: true }],
    ['[results]\nstore = "s3://bk1/p"\nendpoint = "https://s3.example.com"\npath_style = false\nregion = "auto"\nkeep_local = false\n', { AWS_REGION: 'x' },
      { bucket: 'bk1', prefix: 'p', endpoint: 'https://s3.example.com', region: 'auto', pathStyle: false, keepLocal: false }],
  ])('reads %j', (text, env, want) => {
    expect(storeSettingsOf(loadBerthConfig(write(text)).config, env)).toMatchObject(want);
  });

  it.each([
    ['[results]\nstore = "https://bucket/x"\n', 'key results.store: expected "s3://bucket" or "s3://bucket/prefix"'],
    ['[results]\nstore = "s3://B"\n', 'key results.store'],
    ['[results]\nstore = "s3://bucket"\nendpoint = "127.0.0.1:8333"\n', 'key results.endpoint: expected the server\'s http(s) URL'],
    ['[results]\nstore = "s3://bucket"\nkeep_local = "no"\n', 'key results.keep_local: expected true or false'],
    ['[results]\nstore = "s3://bucket"\nbucket = "x"\n', 'key results'],
    ['[results]\nendpoint = "http://127.0.0.1:8333"\n', 'key results.store: [results] names a server but no bucket'],
  ])('refuses %j naming the file, the key and the page', (text, message) => {
    const file = write(text);
    let error = '';
    try { loadBerthConfig(file); } catch (err) { error = (err as Error).message; }
    expect(error).toContain(`${file}: ${message}`);
    expect(error).toContain('docs/configuration.md');
  });

  it('takes credentials from [secrets] before the environment, and leaves them to the SDK when neither has both', () => {
    const config = loadBerthConfig(write('[results]\nstore = "s3://bucket"\n[secrets]\nAWS_ACCESS_KEY_ID = "from-toml"\nAWS_SECRET_ACCESS_KEY = "s1"\n')).config;
    expect(storeCredentialsOf(config, { AWS_ACCESS_KEY_ID: 'from-env', AWS_SECRET_ACCESS_KEY: 's2' })).toEqual({ accessKeyId: 'from-toml', secretAccessKey: 's1' });
    const bare = loadBerthConfig(write('[results]\nstore = "s3://bucket"\n')).config;
    expect(storeCredentialsOf(bare, { AWS_ACCESS_KEY_ID: 'k', AWS_SECRET_ACCESS_KEY: 's', AWS_SESSION_TOKEN: 't' }))
      .toEqual({ accessKeyId: 'k', secretAccessKey: 's', sessionToken: 't' });
    expect(storeCredentialsOf(bare, { AWS_ACCESS_KEY_ID: 'k' })).toBeUndefined();
  });
});
