// environment/docker-compose.yaml at load: docs/design.md section 7 (Compose groups); issue 13 (keys Berth
// cannot honour safely are refused at load with the key and the fix).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readComposePlan } from '../../src/task/compose.ts';
import { RefusalSignal } from '../../src/task/errors.ts';
import { build, expectRefusal } from '../task/helpers.ts';
import { CORPUS } from '../helpers/corpus.ts';

const FILE = 'environment/docker-compose.yaml';
const corpus = CORPUS;

function refusal(text: string): RefusalSignal['detail'] {
  try {
    readComposePlan(FILE, text, undefined);
  } catch (e) {
    if (e instanceof RefusalSignal) return e.detail;
    throw e;
  }
  throw new Error('the file was not refused');
}

const sidecar = (body: string) => `services:\n  main: {}\n  side:\n    image: busybox\n${body.replace(/^/gm, '    ')}\n`;

describe('keys Berth cannot honour safely are refused with the key and the fix', () => {
  it.each([
    ['privileged', sidecar('privileged: true'), 'services.side.privileged', 'cap_add'],
    ['privileged written as a string', sidecar('privileged: "yes"'), 'services.side.privileged', 'cap_add'],
    ['host networking', sidecar('network_mode: host'), 'services.side.network_mode', 'service names'],
    ['another container\'s network', sidecar('network_mode: "container:db"'), 'services.side.network_mode', 'remove network_mode'],
    ['published ports', sidecar('ports: ["8080:80"]'), 'services.side.ports', 'use expose'],
    ['the host pid namespace', sidecar('pid: host'), 'services.side.pid', 'remove pid'],
    ['the host ipc namespace', sidecar('ipc: host'), 'services.side.ipc', 'remove ipc'],
    ['SYS_ADMIN', sidecar('cap_add: [NET_ADMIN, SYS_ADMIN]'), 'services.side.cap_add', 'NET_ADMIN'],
    ['CAP_ALL', sidecar('cap_add: [CAP_ALL]'), 'services.side.cap_add', 'remove it'],
    ['no AppArmor', sidecar('security_opt: ["apparmor=unconfined"]'), 'services.side.security_opt', 'seccomp:unconfined is allowed'],
    ['no SELinux labels', sidecar('security_opt: ["label:disable"]'), 'services.side.security_opt', 'label:disable'],
    ['DAC_READ_SEARCH (open_by_handle_at reaches the host\'s files)', sidecar('cap_add: [DAC_READ_SEARCH]'), 'services.side.cap_add', 'remove it'],
    ['SYS_MODULE on main', 'services:\n  main:\n    cap_add: [SYS_MODULE]\n', 'services.main.cap_add', 'remove it'],
    ['the host uts namespace', sidecar('uts: host'), 'services.side.uts', 'remove uts'],
    ['host devices', sidecar('devices: ["/dev/kvm:/dev/kvm"]'), 'services.side.devices', 'remove devices'],
    ['a fixed container name', sidecar('container_name: db'), 'services.side.container_name', 'service name'],
    ['replicas', sidecar('deploy:\n  replicas: 3'), 'services.side.deploy.replicas', 'remove deploy.replicas'],
    ['the docker socket', sidecar('volumes: ["/var/run/docker.sock:/var/run/docker.sock"]'), 'services.side.volumes[0]', 'relative to environment/'],
    ['a bind mount outside the task folder', sidecar('volumes: ["../../other-task:/data"]'), 'services.side.volumes[0]', 'inside its folder'],
    ['a long-syntax host bind', sidecar('volumes:\n  - type: bind\n    source: /etc\n    target: /host-etc'), 'services.side.volumes[0]', 'relative to environment/'],
    ['an undeclared named volume', sidecar('volumes: ["cache:/cache"]'), 'services.side.volumes[0]', 'declare it'],
    ['an env_file on the host', sidecar('env_file: /etc/secrets.env'), 'services.side.env_file[0]', 'task folder'],
    ['a service from another file', sidecar('extends:\n  file: common.yaml\n  service: base'), 'services.side.extends.file', 'copy'],
    ['an external volume', 'services:\n  main: {}\nvolumes:\n  data:\n    external: true\n', 'volumes.data.external', 'remove external'],
    ['an external network', 'services:\n  main: {}\nnetworks:\n  shared:\n    external: true\n', 'networks.shared.external', 'remove external'],
    ['a host network driver', 'services:\n  main: {}\nnetworks:\n  n:\n    driver: host\n', 'networks.n.driver', 'remove the driver'],
    ['include', 'include: [other.yaml]\nservices:\n  main: {}\n', 'include', 'copy the included services'],
    ['main\'s image', 'services:\n  main:\n    image: other\n', 'services.main.image', 'docker_image'],
    ['main\'s build', 'services:\n  main:\n    build: ./api\n', 'services.main.build', 'environment/Dockerfile'],
    ['main\'s network mode', 'services:\n  main:\n    network_mode: bridge\n', 'services.main.network_mode', '[environment].network_mode'],
    ['main\'s published ports', 'services:\n  main:\n    ports: ["80:80"]\n', 'services.main.ports', 'use expose'],
    ['a remote build context', 'services:\n  main: {}\n  side:\n    build: https://github.com/x/y.git\n', 'services.side.build.context', 'task folder'],
    ['a build context outside the task', 'services:\n  main: {}\n  side:\n    build:\n      context: ../..\n', 'services.side.build.context', 'inside its folder'],
    ['an inline Dockerfile', 'services:\n  main: {}\n  side:\n    build:\n      dockerfile_inline: "FROM x"\n', 'services.side.build.dockerfile_inline', 'context, dockerfile and args'],
    ['a build target', 'services:\n  main: {}\n  side:\n    build:\n      context: .\n      target: dev\n', 'services.side.build.target', 'context, dockerfile and args'],
    ['a service with neither image nor build', 'services:\n  main: {}\n  side:\n    command: ["true"]\n', 'services.side', 'image or a build'],
    ['services that is not a mapping', 'services: [main]\n', 'services', 'mapping'],
    ['a file that is not YAML', 'services: {main: [}\n', '', 'YAML syntax'],
  ])('%s', (_what, text, key, fix) => {
    const d = refusal(text);
    expect(d.code).toBe('compose_unsupported');
    expect(d.file).toBe(FILE);
    expect(d.key).toBe(key);
    expect(d.fix).toContain(fix);
  });
});

describe('what a compose file may hold', () => {
  it('reads services, builds relative to the task folder, sizes and aliased images', () => {
    const plan = readComposePlan(FILE, `
x-common: &common
  restart: "no"
services:
  main:
    depends_on: [db]
    environment: { A: "1" }
    volumes: ["data:/data", "./fixtures:/fixtures:ro"]
  db:
    <<: *common
    image: postgres:16
    network_mode: none
    cap_add: [NET_ADMIN]
    deploy:
      resources:
        limits: { cpus: "0.5", memory: 256M }
  api:
    build:
      context: ..
      dockerfile: environment/api/Dockerfile
      args: { V: "1" }
    expose: ["8000"]
  tmp:
    image: \${SIDE_IMAGE:-busybox}
    ports: []
volumes:
  data: {}
`, { 'postgres:16': 'berth-base:bookworm' });
    expect(plan.services).toEqual(['main', 'db', 'api', 'tmp']);
    expect(plan.sidecars).toEqual([
      { name: 'db', image: 'berth-base:bookworm', build: null, sized: true },
      { name: 'api', image: null, build: { context: '.', dockerfile: 'environment/api/Dockerfile' }, sized: false },
      { name: 'tmp', image: '${SIDE_IMAGE:-busybox}', build: null, sized: false },
    ]);
  });

  // Issue 22 (Compose refusals narrowed to what reaches outside the container): Harbor 0.25 hands these to
  // `docker compose up` unchanged; none of them reaches past the container, so Berth runs them too.
  it.each([
    ['main on named networks', 'services:\n  main:\n    networks: [backend]\n  db:\n    image: busybox\n    networks: [backend]\nnetworks:\n  backend: {}\n'],
    ['cap_add SYS_PTRACE on main', 'services:\n  main:\n    cap_add: [SYS_PTRACE]\n'],
    ['cap_add CAP_SYS_PTRACE on a sidecar', sidecar('cap_add: [CAP_SYS_PTRACE, NET_ADMIN]')],
    ['security_opt seccomp:unconfined', 'services:\n  main:\n    security_opt: ["seccomp:unconfined"]\n'],
    ['security_opt seccomp=unconfined on a sidecar', sidecar('security_opt: ["seccomp=unconfined", "no-new-privileges:true"]')],
  ])('runs %s', (_what, text) => {
    expect(() => readComposePlan(FILE, text, undefined)).not.toThrow();
  });

  it('reads an empty file as a group of main alone', () => {
    expect(readComposePlan(FILE, '', undefined)).toEqual({ file: FILE, services: ['main'], sidecars: [], main_offline: false });
  });

  it.each([
    ['multi-container', 'harbor-cookbook/multi-container', ['main', 'api-server']],
    ['mcp-tools', 'harbor-cookbook/mcp-tools', ['main', 'mcp-server']],
    ['environment-env-multi', 'harbor-examples/environment-env-multi', ['main', 'sidecar']],
    ['sidecar-artifacts', 'harbor-examples/sidecar-artifacts', ['main', 'api']],
    ['chart-area (build context ..)', 'mimic-bench/chart-area', ['main', 'oracle-service']],
  ])('corpus %s reads', (_name, dir, services) => {
    const text = readFileSync(join(corpus, dir, FILE), 'utf8');
    const plan = readComposePlan(FILE, text, { 'alpine:3.21': 'berth-base:bookworm' });
    expect(plan.services).toEqual(services);
    for (const s of plan.sidecars) expect(s.sized).toBe(false);
  });

  it('keeps a chart-area build context that is the task folder itself', () => {
    const text = readFileSync(join(corpus, 'mimic-bench/chart-area', FILE), 'utf8');
    expect(readComposePlan(FILE, text, undefined).sidecars[0]!.build).toEqual({ context: '.', dockerfile: 'environment/oracle-service/Dockerfile' });
  });
});

describe('the loader', () => {
  it('refuses a Compose task with the key it cannot honour, naming the file', () => {
    const r = expectRefusal(build({ 'environment/docker-compose.yaml': 'services:\n  main: {}\n  db:\n    image: x\n    privileged: true\n' }));
    expect(r.code).toBe('compose_unsupported');
    expect(r.file).toBe('/data/demo/environment/docker-compose.yaml');
    expect(r.key).toBe('services.db.privileged');
  });
});
