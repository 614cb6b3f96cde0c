// Dockerfile ENV exactly as Docker resolves it (Task Folder Format § Dockerfile modes: pull and overlay
// files run "with the Dockerfile's settings applied"; NeMo Gym 0.7, 3.5). For each file
// the engine builds it (FROM berth-base:bookworm) and the built image's Config.Env is the answer; Berth's resolver,
// the agent sandbox it seeds from the same file, and what each overlay RUN line sees must all be identical.
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sandboxDeps } from '../../src/host/deps.ts';
import { seedAgentSandbox } from '../../src/host/seed-agent.ts';
import { extractTar } from '../../src/sandbox/files.ts';
import { containerName } from '../../src/sandbox/names.ts';
import { classifyDockerfile, loadTask, resolveDockerfileEnv } from '../../src/task/index.ts';
import { writeDataset } from '../helpers/tasks.ts';
import { BASE_IMAGE, provider, teardownAll } from './helpers.ts';

interface Case {
  name: string;
  /** Lines after `FROM berth-base:bookworm`. `RUN dump N` records the environment at that line as /envdump/N. */
  lines: string[];
}

const dump = (n: number) => `RUN env -0 > /envdump/${n}`;
const mk = 'RUN mkdir -p /envdump && chmod 777 /envdump';

const cases: Case[] = [
  { name: 'one KEY=value', lines: ['ENV X=1'] },
  { name: 'each line against the values in effect at it (X=1, Y=$X, X=2 gives Y=1)', lines: ['ENV X=1', 'ENV Y=$X', 'ENV X=2'] },
  { name: 'one line sees the values from before it', lines: ['ENV X=1', 'ENV X=2 W=$X Z=${X}'] },
  { name: 'single quotes are literal', lines: ["ENV LIT='$HOME' LIT2='a\\b'"] },
  { name: 'double quotes: \\" \\$ \\\\ escape, other backslashes stay', lines: ['ENV X=v', 'ENV DQ="a \\$b \\"c\\" \\q $X \\\\"'] },
  { name: 'backslash escapes outside quotes', lines: ['ENV ESC=a\\ b\\$c\\\\d'] },
  { name: '${X:-default} unset, set and empty', lines: ['ENV S=set E=', 'ENV D1=${UNSET:-def} D2=${S:-def} D3=${E:-def}'] },
  { name: '${X:+alt} unset, set and empty', lines: ['ENV S=set E=', 'ENV A1=${UNSET:+alt} A2=${S:+alt} A3=${E:+alt}'] },
  { name: 'PATH chains keep the system PATH', lines: ['ENV PATH=/opt/tool/bin:$PATH', 'ENV PATH="/root/go/bin:${PATH}"'] },
  { name: 'legacy ENV KEY rest of line', lines: ['ENV X=2', 'ENV LEG some "quoted value" $X  spaced'] },
  { name: 'legacy ENV KEY value, then KEY=value', lines: ['ENV GREETING hello', 'ENV G2=$GREETING-world'] },
  { name: 'repeated keys over many lines, every line counts', lines: ['ENV X=1', 'ENV A=$X', 'ENV X=$X$X', 'ENV B=$X', 'ENV X=3 C=$X'] },
  { name: 'nested default words', lines: ['ENV X=1 Y=2', 'ENV NEST=${UNSET:-$X-${Y}} NEST2=${X:+"q $Y"} NEST3="${UNSET:-\'$Y\'}"'] },
  { name: 'special parameters, digits and a lone $', lines: ['ENV SP=$$ DIG=$1x CASH=cost$ BR=${X}suffix BARE=$Xsuffix'] },
  { name: "the base image's own variables, and unset ones", lines: ['ENV P2=${PATH}:/x NOHOME=${HOME}'] },
  { name: 'empty values', lines: ['ENV E= E2="" E3=\'\''] },
  { name: 'a continuation across lines', lines: ['ENV A=1 \\', '    B=2 \\', '    C="x  y"'] },
  { name: 'a quoted value with spaces, referenced later', lines: ['ENV A="x y"', 'ENV B="$A z" C=$A'] },
  { name: '= inside the value', lines: ['ENV URL=http://h/?a=b&c=d EQ==='] },
  { name: 'quotes inside the other quotes', lines: ['ENV Q1=\'say "hi"\' Q2="it\'s" Q3=a"b c"d\'e f\''] },
  { name: 'non-ASCII values', lines: ['ENV U=héllo V="日本 $U"'] },
  { name: 'LABEL, CMD [] and ENTRYPOINT [] beside ENV', lines: ['LABEL a=b', 'ENV A=1', 'CMD []', 'ENTRYPOINT []', 'ENV B=$A'] },
  // Overlay mode: each RUN line records what it sees.
  { name: 'RUN lines see the environment at their line', lines: [mk, 'ENV A=1', dump(1), 'ENV A=2 B=$A', dump(2), 'ENV PATH=/x/bin:$PATH C="$B $A"', dump(3)] },
  { name: 'a RUN line before any ENV sees only the base', lines: [mk, dump(1), 'ENV LATE=1 PATH=/late:$PATH', dump(2)] },
  { name: 'RUN lines under WORKDIR and USER', lines: [mk, 'ENV A=1', 'WORKDIR /srv/app', dump(1), 'USER nobody', 'ENV B=${A:+on}', dump(2)] },
];

const made: string[] = [];
const tags: string[] = [];
let work: string;
let baseEnv: Record<string, string>;

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'berth-envcases-'));
  baseEnv = (await provider.images.config(BASE_IMAGE))!.env;
});
afterAll(async () => {
  await teardownAll(made);
  await Promise.all(tags.map((t) => provider.docker.getImage(t).remove({ force: true }).catch(() => undefined)));
  await rm(work, { recursive: true, force: true });
});

/** `env -0` output as a map. */
function envOf(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const kv of text.split('\0')) {
    const at = kv.indexOf('=');
    if (at > 0) out[kv.slice(0, at)] = kv.slice(at + 1);
  }
  return out;
}

/** The engine's answer: builds the file and returns its Config.Env and, for overlay files, /envdump/N per RUN dump. */
async function engineAnswer(dockerfile: string, i: number): Promise<{ env: Record<string, string>; order: string[]; dumps: Record<string, Record<string, string>> }> {
  const ctx = join(work, `ctx-${i}`);
  await rm(ctx, { recursive: true, force: true });
  await mkdir(ctx);
  await writeFile(join(ctx, 'Dockerfile'), dockerfile);
  const tag = `berth-test-envcase-${randomBytes(4).toString('hex')}:${i}`;
  tags.push(tag);
  await provider.images.build({ contextDir: ctx, tag, logPath: join(work, `build-${i}.log`), lockDir: join(work, 'locks') });
  const config = (await provider.images.config(tag))!;
  const dumps: Record<string, Record<string, string>> = {};
  if (dockerfile.includes('/envdump/')) {
    const c = await provider.docker.createContainer({ Image: tag, Entrypoint: ['true'], Labels: { 'berth.test': 'envcases' } });
    try {
      const out = join(work, `dump-${i}`);
      await extractTar((await c.getArchive({ path: '/envdump' })) as unknown as Readable, out);
      for (const f of await readdir(out)) dumps[f] = envOf(await readFile(join(out, f), 'utf8'));
    } finally {
      await c.remove({ force: true });
    }
  }
  return { env: config.env, order: Object.keys(config.env), dumps };
}

async function berthSandbox(dockerfile: string, i: number): Promise<{ env: Record<string, string>; dumps: Record<string, Record<string, string>> }> {
  const root = writeDataset({
    [`case-${i}/task.toml`]: '[agent]\ntimeout_sec = 60\n[verifier]\ntimeout_sec = 60\n',
    [`case-${i}/instruction.md`]: 'nothing\n',
    [`case-${i}/tests/test.sh`]: '#!/bin/bash\necho 1 > /logs/verifier/reward.txt\n',
    [`case-${i}/environment/Dockerfile`]: dockerfile,
  });
  const task = await loadTask(join(root, `case-${i}`), { logger: { warn: () => undefined } });
  const workflowId = `berth/vitest-envcases/${randomBytes(4).toString('hex')}/0`;
  const name = containerName(workflowId, 'run', 'agent');
  made.push(name);
  const { handle } = await seedAgentSandbox(sandboxDeps(provider), task, {
    name, labels: { batch: 'vitest-envcases', workflowId, role: 'agent' }, imageAliases: {}, hostEnv: {}, logsDir: join(work, `logs-${i}`), hidden: () => [],
  });
  const env = await provider.exec(handle, { command: 'env -0', user: 'root', workdir: '/' });
  const listing = await provider.exec(handle, { command: 'cd /envdump 2>/dev/null && for f in *; do printf "%s\\t" "$f"; base64 -w0 "$f"; echo; done', user: 'root', workdir: '/' });
  const dumps: Record<string, Record<string, string>> = {};
  for (const line of listing.stdout.split('\n').filter(Boolean)) {
    const [f, b64] = line.split('\t');
    dumps[f!] = envOf(Buffer.from(b64 ?? '', 'base64').toString('utf8'));
  }
  return { env: envOf(env.stdout), dumps };
}

/** Variables every `docker exec` and every shell adds, which no image configuration holds. */
const PROCESS_NOISE = ['HOSTNAME', 'HOME', 'PWD', 'SHLVL', '_'];

describe('Dockerfile ENV compared with the engine (Task Folder Format § Dockerfile modes; NeMo Gym 0.7)', () => {
  it(`has at least 20 files`, () => expect(cases.length).toBeGreaterThanOrEqual(20));

  cases.forEach((c, i) => {
    it(c.name, async () => {
      const dockerfile = [`FROM ${BASE_IMAGE}`, ...c.lines, ''].join('\n');
      const classification = classifyDockerfile(dockerfile);
      expect(classification.mode, classification.buildReason ?? '').toBe(dockerfile.includes('\nRUN ') ? 'overlay' : 'pull');
      const [engine, berth] = await Promise.all([engineAnswer(dockerfile, i), berthSandbox(dockerfile, i)]);

      // The one resolver, against the base image's configuration.
      const resolved = resolveDockerfileEnv(classification.instructions, baseEnv);
      expect(resolved.env).toEqual(engine.env);
      expect(Object.keys(resolved.env)).toEqual(engine.order);

      // The agent sandbox seeded from the file: its environment is the built image's.
      const inSandbox = Object.fromEntries(Object.entries(berth.env).filter(([k]) => !PROCESS_NOISE.includes(k) || k in engine.env));
      expect(inSandbox).toEqual(engine.env);

      // Overlay RUN lines: what each saw in the sandbox is what it saw in the build.
      expect(Object.keys(berth.dumps).sort()).toEqual(Object.keys(engine.dumps).sort());
      for (const [n, seen] of Object.entries(engine.dumps)) expect(berth.dumps[n], `RUN dump ${n}`).toEqual(seen);
    });
  });
});
