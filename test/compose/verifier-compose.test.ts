// tests/docker-compose.yaml's main honoured on the real engine (issue 22: build.dockerfile, main.image and
// pull_policy are honoured or refused by name, never read and ignored). Harbor stacks the file on its verifier
// template, so `compose build` uses build.dockerfile and build.args and tags the image with main's `image:`.
import Docker from 'dockerode';
import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { SeedFailed } from '../../src/sandbox/errors.ts';
import { prepareServiceImages } from '../../src/sandbox/image-prep.ts';
import { runVerification } from '../../src/verify/run-verification.ts';
import { BASE_IMAGE, context, Fixture, provider } from '../verify/orchestration-helpers.ts';

const fx = new Fixture();
const docker = new Docker();
const pinned = `berth-test-pinned-verifier-${randomBytes(3).toString('hex')}:2`;
afterAll(async () => {
  await docker.getImage(pinned).remove().catch(() => undefined);
  await fx.cleanup();
});

describe('a separate verifier built as tests/docker-compose.yaml says (flow style)', () => {
  it('builds build.dockerfile with build.args, tags it with main\'s image, and grades in it', async () => {
    const task = await fx.task({
      'task.toml': `[environment]\ndocker_image = "${BASE_IMAGE}"\n[verifier]\nenvironment_mode = "separate"\n[verifier.environment]\ncpus = 1\n`,
      'tests/Dockerfile': `FROM ${BASE_IMAGE}\nRUN mkdir -p /tests && printf 'echo 0 > /logs/verifier/reward.txt\\n' > /tests/test.sh\n`,
      'tests/Grader.Dockerfile': `FROM ${BASE_IMAGE}\nARG LEVEL\nRUN mkdir -p /tests && printf 'echo %s > /logs/verifier/reward.txt\\n' "$LEVEL" > /tests/test.sh\n`,
      'tests/docker-compose.yaml': `{services: {main: {image: "${pinned}", build: {context: ., dockerfile: Grader.Dockerfile, args: {LEVEL: "1"}}}}}\n`,
      'tests/test.sh': 'echo 0 > /logs/verifier/reward.txt\n',
    });
    const r = await runVerification(context(fx, task, await fx.seed()));
    expect(r, r.failure_reason ?? '').toMatchObject({ reward: 1, masked: false });
    expect((await docker.getImage(pinned).inspect()).Id).toMatch(/^sha256:/);
  }, 180_000);
});

describe('a sidecar\'s pull_policy: never (environment/docker-compose.yaml)', () => {
  it('takes an image the engine has, and fails the seed naming the policy for one it lacks, without pulling', async () => {
    const absent = `berth-test-never-pulled-${randomBytes(3).toString('hex')}:1`;
    expect(await prepareServiceImages(provider, { services: { side: { image: BASE_IMAGE, pull_policy: 'never' } } }, {})).toEqual({ side: BASE_IMAGE });
    const err = await prepareServiceImages(provider, { services: { side: { image: absent, pull_policy: 'never' } } }, {}).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SeedFailed);
    expect((err as Error).message).toContain(`image ${absent} is not on this engine and service "side" has pull_policy: never`);
  });
});
