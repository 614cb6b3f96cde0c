import { describe, expect, it } from 'vitest';
import { credentialsFromDockerConfig, dockerConfigPath, parseChallenge, tokenUrl } from '../../src/sandbox/registry-auth.ts';
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
    ['no auths at all (a credential helper)', { credsStore: 'desktop' }, 'reg.example', null],
  ])('%s', (_what, config, host, want) => {
    expect(credentialsFromDockerConfig(JSON.stringify(config), FILE, host)).toEqual(want);
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
