import { describe, expect, it } from 'vitest';
import { credentialsFromDockerConfig, dockerConfigPath, parseChallenge, tokenUrl, type CredentialHelperRunner } from '../../src/sandbox/registry-auth.ts';
import { pullSecret, pullSecretName } from '../../src/sandbox/kubernetes/pull-secret.ts';

// Registry credentials (issue 23: registries that need them): a Docker config.json's `auths` as `docker login` writes
// it, the registry's WWW-Authenticate challenge (Distribution's token authentication), and the pods' pull secret.

const b64 = (s: string) => Buffer.from(s).toString('base64');
const FILE = '/home/u/.docker/config.json';

describe('credentials from a Docker config.json', () => {
  it.each<[string, unknown, string, { username: string; password: string } | null]>([
    ['auth as docker login writes it', { auths: { 'reg.example:5000': { auth: b64('alice:s3cr:et') } } }, 'reg.example:5000', { username: 'alice', password: 's3cr:et' }],
    ['under an https:// key', { auths: { 'https://reg.example': { auth: b64('bob:pw') } } }, 'reg.example', { username: 'bob', password: 'pw' }],
    ['username and password fields', { auths: { 'reg.example': { username: 'carol', password: 'pw2' } } }, 'reg.example', { username: 'carol', password: 'pw2' }],
    ['Docker Hub under its v1 index key', { auths: { 'https://index.docker.io/v1/': { auth: b64('dan:pw') } } }, 'registry-1.docker.io', { username: 'dan', password: 'pw' }],
    ['another registry only', { auths: { 'other.example': { auth: b64('x:y') } } }, 'reg.example', null],
  ])('%s', (_what, config, host, want) => {
    expect(credentialsFromDockerConfig(JSON.stringify(config), FILE, host)).toEqual(want);
  });

  // The helper's side is the real docker-credential-pass in test/kubernetes/registry-auth.test.ts; here, which helper is
  // asked for which server, and what each answer means.
  describe('through a credential helper, as the docker CLI picks it', () => {
    const asked: string[] = [];
    const answers: Record<string, ReturnType<CredentialHelperRunner>> = {
      'pass reg.example:5000': { status: 0, stdout: '{"ServerURL":"reg.example:5000","Username":"erin","Secret":"pw3"}', stderr: '' },
      'desktop reg.example': { status: 0, stdout: '{"ServerURL":"reg.example","Username":"fay","Secret":"pw4"}', stderr: '' },
      'desktop https://reg.example': { status: 0, stdout: '{"ServerURL":"https://reg.example","Username":"gus","Secret":"pw5"}', stderr: '' },
      'old other.example': { status: 0, stdout: '{"ServerURL":"other.example","Username":"","Secret":""}', stderr: '' },
      'new other.example': { status: 1, stdout: 'credentials not found in native keychain\n', stderr: '' },
      'broken reg.example': { status: 1, stdout: '', stderr: 'gpg: decryption failed: No secret key\n' },
      'odd reg.example': { status: 0, stdout: 'hello', stderr: '' },
      'token reg.example': { status: 0, stdout: '{"Username":"<token>","Secret":"refresh"}', stderr: '' },
      'gone reg.example': { status: null, stdout: '', stderr: '', error: Object.assign(new Error('spawnSync docker-credential-gone ENOENT'), { code: 'ENOENT' }) },
    };
    const run: CredentialHelperRunner = (name, server) => {
      asked.push(`${name} ${server}`);
      return answers[`${name} ${server}`] ?? { status: 1, stdout: 'credentials not found in native keychain', stderr: '' };
    };

    it.each<[string, unknown, string, { username: string; password: string } | null, string]>([
      ['credHelpers names one for the registry (before credsStore and auths)', { credHelpers: { 'reg.example:5000': 'pass' }, credsStore: 'desktop', auths: { 'reg.example:5000': { auth: b64('x:y') } } }, 'reg.example:5000', { username: 'erin', password: 'pw3' }, 'pass reg.example:5000'],
      ['credsStore for every registry (auths entries are empty placeholders)', { credsStore: 'desktop', auths: { 'reg.example': {} } }, 'reg.example', { username: 'fay', password: 'pw4' }, 'desktop reg.example'],
      ['credsStore asked under the key docker login wrote', { credsStore: 'desktop', auths: { 'https://reg.example': {} } }, 'reg.example', { username: 'gus', password: 'pw5' }, 'desktop https://reg.example'],
      ['an older helper\'s empty answer: none', { credHelpers: { 'other.example': 'old' } }, 'other.example', null, 'old other.example'],
      ['a newer helper\'s "not found": none', { credsStore: 'new' }, 'other.example', null, 'new other.example'],
    ])('%s', (_what, config, host, want, helperCall) => {
      asked.length = 0;
      expect(credentialsFromDockerConfig(JSON.stringify(config), FILE, host, run)).toEqual(want);
      expect(asked).toEqual([helperCall]);
    });

    it.each([
      ['a helper not installed', 'gone', /config\.json: key credHelpers\["reg\.example"\] names the credential helper docker-credential-gone, which is not on this worker's PATH; install it, or remove the key/],
      ['a helper that fails', 'broken', /config\.json: key credHelpers\["reg\.example"\]: docker-credential-broken get reg\.example failed \(exit 1\): gpg: decryption failed: No secret key; fix the helper's store/],
      ['an answer that is not JSON', 'odd', /docker-credential-odd get reg\.example answered no JSON/],
      ['an identity token', 'token', /keeps an identity token for reg\.example, which Berth cannot push with; run `docker login reg\.example`/],
    ])('refuses %s, naming the file, the key and the fix', (_what, helper, want) => {
      expect(() => credentialsFromDockerConfig(JSON.stringify({ credHelpers: { 'reg.example': helper } }), FILE, 'reg.example', run)).toThrow(want);
    });
  });

  it.each([
    ['not JSON', '{', /\/home\/u\/\.docker\/config\.json: not JSON .*docker login reg\.example/],
    ['an auth that is not user:password', JSON.stringify({ auths: { 'reg.example': { auth: b64('nocolon') } } }), /config\.json: key auths\["reg\.example"\]\.auth is not base64 of "user:password"; run `docker login reg\.example` again/],
  ])('refuses %s, naming the file, the key and the fix', (_what, text, want) => {
    expect(() => credentialsFromDockerConfig(text, FILE, 'reg.example')).toThrow(want);
  });

  it('reads [kubernetes].docker_config, else $DOCKER_CONFIG, else ~/.docker', () => {
    expect(dockerConfigPath('/etc/berth/docker.json', { DOCKER_CONFIG: '/d' })).toBe('/etc/berth/docker.json');
    expect(dockerConfigPath(undefined, { DOCKER_CONFIG: '/d' })).toBe('/d/config.json');
    expect(dockerConfigPath(undefined, {})).toMatch(/\/\.docker\/config\.json$/);
  });
});

describe('the registry\'s challenge', () => {
  it.each<[string, string, ReturnType<typeof parseChallenge>]>([
    ['basic (htpasswd)', 'Basic realm="berth-test"', { scheme: 'basic', params: { realm: 'berth-test' } }],
    ['bearer with service and scope', 'Bearer realm="https://auth.docker.io/token",service="registry.docker.io",scope="repository:library/debian:pull"',
      { scheme: 'bearer', params: { realm: 'https://auth.docker.io/token', service: 'registry.docker.io', scope: 'repository:library/debian:pull' } }],
    ['unquoted values and spaces', 'Bearer realm=https://a/t, service=r', { scheme: 'bearer', params: { realm: 'https://a/t', service: 'r' } }],
    ['empty', '', null],
  ])('%s', (_what, header, want) => {
    expect(parseChallenge(header)).toEqual(want);
  });

  it('asks the realm for a token with the service and scope', () => {
    const c = parseChallenge('Bearer realm="https://auth.example/token?x=1",service="reg",scope="repository:berth/a:pull"')!;
    expect(tokenUrl(c)).toBe('https://auth.example/token?x=1&service=reg&scope=repository%3Aberth%2Fa%3Apull');
    expect(() => tokenUrl({ scheme: 'bearer', params: {} })).toThrow(/names no realm/);
  });
});

describe('the pods\' pull secret', () => {
  it('holds that registry\'s entry only, as a kubernetes.io/dockerconfigjson Secret named after it', () => {
    const s = pullSecret('127.0.0.1:5999', { username: 'u', password: 'p' });
    expect(s.metadata?.name).toBe(pullSecretName('127.0.0.1:5999'));
    expect(s.metadata?.name).toMatch(/^berth-registry-[0-9a-f]{12}$/);
    expect(s.type).toBe('kubernetes.io/dockerconfigjson');
    expect(JSON.parse(Buffer.from(s.data!['.dockerconfigjson']!, 'base64').toString('utf8'))).toEqual({ auths: { '127.0.0.1:5999': { username: 'u', password: 'p', auth: b64('u:p') } } });
    expect(pullSecretName('a:1')).not.toBe(pullSecretName('a:2'));
  });
});
