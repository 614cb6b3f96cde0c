// A group's lifecycle on the real engine with the real Compose v2: docs/design.md section 7 (Compose
// groups); Task Folder Format § [environment] (env reaches main only).
import Docker from 'dockerode';
import { afterAll, describe, expect, it } from 'vitest';
import { SeedFailed } from '../../src/sandbox/errors.ts';
import { SEEDED_MARKER } from '../../src/sandbox/seed-scripts.ts';
import { parseCidr, overlaps } from '../../src/sandbox/docker/subnets.ts';
import { composeFolder, groupSpec, leftovers, sh, testDriver, TEST_POOL, uniqueProject, BASE_IMAGE } from './helpers.ts';

const docker = new Docker();
const driver = testDriver();
const made: string[] = [];

afterAll(async () => {
  for (const p of made) await driver.remove({ name: p, kind: 'group' });
});

const SEMANTICS = `
services:
  main:
    depends_on:
      api:
        condition: service_healthy
      init:
        condition: service_completed_successfully
    volumes:
      - shared:/shared
  api:
    image: ${BASE_IMAGE}
    command: ["python3", "-m", "http.server", "8000"]
    environment:
      FROM_FILE: "\${BERTH_TEST_UNSET_VAR:-fallback}"
    deploy:
      resources:
        limits:
          memory: 192M
    healthcheck:
      test: ["CMD", "python3", "-c", "import urllib.request; urllib.request.urlopen('http://localhost:8000')"]
      interval: 1s
      retries: 30
    volumes:
      - shared:/shared
  init:
    image: ${BASE_IMAGE}
    command: ["sh", "-c", "echo $$HOSTNAME-literal > /shared/init-done"]
    volumes:
      - shared:/shared
volumes:
  shared:
`;

describe('a Compose group', () => {
  const project = uniqueProject('semantics');
  made.push(project);
  const folder = composeFolder(SEMANTICS);

  it('starts with depends_on conditions, service names as DNS names, env in main only, a shared volume and $$', async () => {
    const r = await driver.createOrAdoptGroup(groupSpec(project, folder, {
      main: { image: BASE_IMAGE, keepAlive: ['/bin/sh', '-c', 'exec sleep infinity'], env: { TASK_ENV: 'v$1 stays' }, user: 'root', workdir: '/', cpus: 1, memoryMb: 256 },
    }));
    expect(r.adopted).toBe(false);
    expect(Object.keys(r.group.services).sort()).toEqual(['api', 'init', 'main']);
    expect(r.defaultSized).toEqual(['init']);
    const { main, api } = r.group.services;

    // The healthy-gated sidecar answers by its service name.
    const reach = await sh(main!, `python3 -c "import urllib.request; print(urllib.request.urlopen('http://api:8000').status)"`);
    expect(reach.stdout.trim()).toBe('200');
    expect((await docker.getContainer(api!.containerId).inspect()).State.Health?.Status).toBe('healthy');

    // [environment].env reaches main (a literal $ kept), never the sidecar; the sidecar has its own file env.
    expect((await sh(main!, 'printf %s "$TASK_ENV"')).stdout).toBe('v$1 stays');
    expect((await sh(api!, 'printf %s "${TASK_ENV-unset}"')).stdout).toBe('unset');
    expect((await sh(api!, 'printf %s "$FROM_FILE"')).stdout).toBe('fallback');

    // $$ reached the one-shot service as a literal $ (its shell expanded $HOSTNAME), written to the shared volume.
    const done = await sh(main!, 'cat /shared/init-done');
    expect(done.stdout.trim()).toMatch(/^[0-9a-f]{12}-literal$/);
    await sh(api!, 'echo from-api > /shared/api-note');
    expect((await sh(main!, 'cat /shared/api-note')).stdout.trim()).toBe('from-api');

    // main: the keep-alive under init, no swap beyond its memory, [environment]'s cpus.
    const mi = await docker.getContainer(main!.containerId).inspect();
    expect(mi.HostConfig.Init).toBe(true);
    expect(mi.HostConfig.NanoCpus).toBe(1e9);
    expect(mi.HostConfig.Memory).toBe(256 * 1024 * 1024);
    expect(mi.HostConfig.MemorySwap).toBe(256 * 1024 * 1024);
    expect(mi.Config.Entrypoint).toEqual(['/bin/sh', '-c', 'exec sleep infinity']);
    // A sidecar's own deploy.resources.limits, as Compose applies them.
    expect((await docker.getContainer(api!.containerId).inspect()).HostConfig.Memory).toBe(192 * 1024 * 1024);
  });

  it('labels every container, network and volume, on a subnet from Berth\'s range', async () => {
    const want = { 'berth.batch': 'test-batch', 'berth.workflow': `berth/test/${project}`, 'berth.role': 'agent', 'berth.group': project };
    const containers = await docker.listContainers({ all: true, filters: { label: [`com.docker.compose.project=${project}`] } });
    expect(containers).toHaveLength(3);
    for (const c of containers) expect(c.Labels).toMatchObject(want);
    const nets = await docker.listNetworks({ filters: { label: [`berth.group=${project}`] } });
    expect(nets).toHaveLength(1);
    expect(nets[0]!.Labels).toMatchObject(want);
    const subnet = (await docker.getNetwork(nets[0]!.Id).inspect()).IPAM?.Config?.[0]?.Subnet as string;
    expect(overlaps(parseCidr(subnet), parseCidr(TEST_POOL))).toBe(true);
    const vols = (await docker.listVolumes({ filters: { label: [`berth.group=${project}`] } })).Volumes;
    expect(vols.map((v) => v.Name)).toEqual([`${project}_shared`]);
    expect(vols[0]!.Labels).toMatchObject(want);
    expect(await driver.listByLabel([`berth.workflow=berth/test/${project}`])).toEqual([{ name: project, kind: 'group', workflowId: `berth/test/${project}` }]);
  });

  it('replaces a group whose seed never finished, and adopts one that did, never making a second', async () => {
    const before = await driver.inspectGroup(project);
    const again = await driver.createOrAdoptGroup(groupSpec(project, folder));
    expect(again.adopted).toBe(false);
    expect(again.group.services.main!.containerId).not.toBe(before.services.main!.containerId);

    expect((await sh(again.group.services.main!, `mkdir -p /logs && touch ${SEEDED_MARKER}`)).exitCode).toBe(0);
    const adopted = await driver.createOrAdoptGroup(groupSpec(project, folder));
    expect(adopted.adopted).toBe(true);
    expect(adopted.group.services.main!.containerId).toBe(again.group.services.main!.containerId);
    const containers = await docker.listContainers({ all: true, filters: { label: [`com.docker.compose.project=${project}`] } });
    expect(containers).toHaveLength(3);
  });

  it('removes the whole group: containers, network and volume', async () => {
    expect((await driver.remove({ name: project, kind: 'group' })).removed).toBe(true);
    expect(await leftovers(project)).toEqual([]);
    expect((await driver.remove({ name: project, kind: 'group' })).removed).toBe(false);
  });
});

describe('a sidecar that dies at start', () => {
  it('fails the group naming the service, its exit code and a bounded tail of its log', async () => {
    const project = uniqueProject('dies');
    made.push(project);
    const folder = composeFolder(`
services:
  main:
    depends_on:
      db:
        condition: service_healthy
  db:
    image: ${BASE_IMAGE}
    command: ["sh", "-c", "for i in $$(seq 1 400); do echo filler line $$i; done; echo 'fatal: cannot open the database'; exit 3"]
    healthcheck:
      test: ["CMD", "true"]
      interval: 1s
`);
    const err = await driver.createOrAdoptGroup(groupSpec(project, folder)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SeedFailed);
    const message = (err as SeedFailed).message;
    expect(message).toContain('service "db" exited with code 3 at start');
    expect(message).toContain('fatal: cannot open the database');
    expect(message).not.toContain('filler line 1\n');
    expect(message.length).toBeLessThan(8000);
    expect((err as SeedFailed).kind).toBe('harbor:seed_failed');
    await driver.remove({ name: project, kind: 'group' });
    expect(await leftovers(project)).toEqual([]);
  });
});

describe('driver primitives', () => {
  it('reads an image\'s configuration, null for an image the engine lacks', async () => {
    const cfg = await driver.imageConfiguration(BASE_IMAGE);
    expect(cfg?.cmd).toEqual(['bash']);
    expect(cfg?.env.PATH).toContain('/usr/bin');
    expect(cfg?.healthcheck).toBeNull();
    expect(await driver.imageConfiguration('berth-test-no-such-image:never')).toBeNull();
  });

  it('names the engine it talks to', async () => {
    const id = await driver.engineIdentity();
    expect(id.id).toBe(String((await docker.info()).ID));
    expect(id.version).toMatch(/^\d+\./);
  });
});
