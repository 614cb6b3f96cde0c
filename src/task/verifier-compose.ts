// tests/docker-compose.yaml for a separate verifier (Task Folder Verifiers § Shared and separate
// verification; nemo_gym.data.tasks.harbor.verifier_env). Only `services`, `name`, `version` and `x-` keys at the
// top, only service `main`, and `main` may set `image`, `build`, `pull_policy` (a prebuilt verifier image: only a
// `pull_policy` other than `build`). Read with the YAML library the loader reads every compose file with, so flow
// style, anchors and quoting mean what Compose says; what main sets is honoured (verifier-plan.ts,
// image-prep.ts) or refused by name.
import { posix } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { isHarborVariable, pullPolicyProblem } from './compose.ts';

type Table = Record<string, unknown>;
const isTable = (v: unknown): v is Table => typeof v === 'object' && v !== null && !Array.isArray(v);

export interface VerifierComposeMain {
  /** Harbor names the verifier's build so (`image:` beside its build template): the built image also gets this tag. */
  image: string | null;
  /** `build.dockerfile`, relative to tests/ (default Dockerfile); `build.args`. Null without a build section. */
  build: { dockerfile: string; args: Record<string, string> } | null;
  pull_policy: string | null;
}

type Check = { ok: true; main: VerifierComposeMain | null } | { ok: false; key: string; value?: unknown; problem: string };

const BUILD_KEYS = new Set(['context', 'dockerfile', 'args']);

function readBuild(build: unknown): VerifierComposeMain['build'] | Extract<Check, { ok: false }> {
  const key = 'services.main.build';
  if (build === null || build === undefined) return { dockerfile: 'Dockerfile', args: {} };
  const b: Table = typeof build === 'string' ? { context: build } : isTable(build) ? build : {};
  if (!isTable(build) && typeof build !== 'string') return { ok: false, key, value: build, problem: 'build is neither a path nor a mapping' };
  for (const k of Object.keys(b)) {
    if (!BUILD_KEYS.has(k)) return { ok: false, key: `${key}.${k}`, value: b[k], problem: `the verifier image is built from tests/ with context, dockerfile and args only; build.${k} is not honoured` };
  }
  // Harbor's verifier environment is built from tests/, which its ${CONTEXT_DIR} names there.
  const tests = b.context === undefined || isHarborVariable(b.context, 'CONTEXT_DIR') || posix.normalize(String(b.context)).replace(/\/$/, '') === '.';
  if (!tests) {
    return { ok: false, key: `${key}.context`, value: b.context, problem: 'the verifier image is built with tests/ as its context (Harbor\'s verifier template); another context is not honoured' };
  }
  const dockerfile = b.dockerfile === undefined ? 'Dockerfile' : String(b.dockerfile);
  const norm = posix.normalize(dockerfile);
  if (dockerfile.startsWith('/') || norm === '..' || norm.startsWith('../')) {
    return { ok: false, key: `${key}.dockerfile`, value: dockerfile, problem: 'the Dockerfile lies outside tests/, the build context' };
  }
  const args: Record<string, string> = {};
  if (Array.isArray(b.args)) {
    for (const a of b.args) {
      const [k, ...v] = String(a).split('=');
      if (v.length > 0) args[k!] = v.join('=');
    }
  } else if (isTable(b.args)) {
    for (const [k, v] of Object.entries(b.args)) if (v !== null && v !== undefined) args[k] = String(v);
  } else if (b.args !== undefined) {
    return { ok: false, key: `${key}.args`, value: b.args, problem: 'build.args is neither a list nor a mapping' };
  }
  return { dockerfile: norm, args };
}

/** The file's verdict: acceptable (with what `main` sets), else the key refused and why. */
export function checkVerifierCompose(text: string, prebuilt: boolean): Check {
  let doc: unknown;
  try {
    doc = parseYaml(text, { merge: true });
  } catch (e) {
    return { ok: false, key: '', problem: `the file is not valid YAML (${String((e as Error).message).split('\n')[0]})` };
  }
  if (doc === null || doc === undefined) doc = {};
  if (!isTable(doc)) return { ok: false, key: '', problem: 'the file is not a mapping' };
  for (const key of Object.keys(doc)) {
    if (!['services', 'name', 'version'].includes(key) && !key.startsWith('x-')) {
      return { ok: false, key, problem: 'only services, name, version and x- keys may sit at the top of a verifier compose file' };
    }
  }
  const services = doc.services ?? {};
  if (!isTable(services)) return { ok: false, key: 'services', value: services, problem: 'services is not a mapping' };
  for (const name of Object.keys(services)) {
    if (name !== 'main') return { ok: false, key: `services.${name}`, problem: 'verifier sidecars are not run; only service main is allowed' };
  }
  if (!('main' in services)) return { ok: true, main: null };
  const main = services.main ?? {};
  if (!isTable(main)) return { ok: false, key: 'services.main', value: main, problem: 'main is not a mapping' };
  const allowed = prebuilt ? ['pull_policy'] : ['image', 'build', 'pull_policy'];
  for (const key of Object.keys(main)) {
    if (!allowed.includes(key)) {
      return {
        ok: false,
        key: `services.main.${key}`,
        problem: prebuilt ? 'beside a prebuilt verifier image, main may only set pull_policy' : 'main may only set image, build and pull_policy',
      };
    }
  }
  const pullPolicy = main.pull_policy === undefined || main.pull_policy === null ? null : String(main.pull_policy);
  if (prebuilt && pullPolicy === 'build') {
    return { ok: false, key: 'services.main.pull_policy', value: 'build', problem: 'a prebuilt verifier image cannot be built' };
  }
  // Built: Harbor's template builds it every time (pull_policy: build); prebuilt: pulled when missing, or never.
  const policyProblem = pullPolicy === null ? null : prebuilt ? pullPolicyProblem(pullPolicy, false) : pullPolicy === 'build' ? null : 'the verifier image is built from tests/ on every run (Harbor\'s pull_policy: build); remove pull_policy or set it to build';
  if (policyProblem) return { ok: false, key: 'services.main.pull_policy', value: pullPolicy, problem: policyProblem };
  const build = prebuilt ? null : readBuild(main.build);
  if (build !== null && 'ok' in build) return build;
  // Harbor's own name for main's image names nothing of the task's.
  const image = typeof main.image === 'string' && main.image !== '' && !isHarborVariable(main.image, 'MAIN_IMAGE_NAME') ? main.image : null;
  return { ok: true, main: { image, build: 'build' in main ? build : null, pull_policy: pullPolicy } };
}
