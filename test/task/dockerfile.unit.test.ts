// Dockerfile modes: Task Folder Format § Dockerfile modes; exact rules NeMo Gym 0.7
import { describe, expect, it } from 'vitest';
import { classifyDockerfile, expandDockerfileValue, logicalLines, parseEnvArgs, resolveDockerfileEnv, type DockerfileMode } from '../../src/task/index.ts';
import { build, expectTask } from './helpers.ts';

const modes: Array<[string, string, DockerfileMode]> = [
  ['FROM only is pull', 'FROM ubuntu:24.04\n', 'pull'],
  ['FROM + WORKDIR, ENV, USER, LABEL is pull', 'FROM ubuntu:24.04\nWORKDIR /app\nENV A=1\nUSER agent\nLABEL x=y\n', 'pull'],
  ['keywords are case-insensitive', 'from ubuntu\nworkdir /app\n', 'pull'],
  ['FROM flags are ignored', 'FROM --platform=linux/amd64 ubuntu:24.04\n', 'pull'],
  ['FROM img AS name', 'FROM ubuntu AS base\n', 'pull'],
  ['CMD [] is ignored', 'FROM ubuntu\nCMD []\n', 'pull'],
  ['ENTRYPOINT [] is accepted', 'FROM ubuntu\nENTRYPOINT []\n', 'pull'],
  ['RUN makes overlay', 'FROM ubuntu\nRUN apt-get update\n', 'overlay'],
  ['exec-form RUN is overlay', 'FROM ubuntu\nRUN ["echo", "a b"]\n', 'overlay'],
  ['herestring <<< is not a heredoc', 'FROM ubuntu\nRUN cat <<< "x"\n', 'overlay'],
  ['COPY needs a build', 'FROM ubuntu\nCOPY a /a\n', 'build'],
  ['ADD needs a build', 'FROM ubuntu\nADD a /a\n', 'build'],
  ['a second FROM needs a build', 'FROM ubuntu AS a\nFROM debian\n', 'build'],
  ['$ in FROM needs a build', 'ARG X\nFROM ubuntu:$X\n', 'build'],
  ['$ in FROM (no ARG) needs a build', 'FROM ${IMG}\n', 'build'],
  ['extra FROM words need a build', 'FROM ubuntu extra\n', 'build'],
  ['an instruction before FROM needs a build', 'ENV A=1\nFROM ubuntu\n', 'build'],
  ['no FROM needs a build', 'RUN true\n', 'build'],
  ['an empty file needs a build', '# nothing\n', 'build'],
  ['RUN --mount needs a build', 'FROM ubuntu\nRUN --mount=type=cache,target=/x true\n', 'build'],
  ['heredoc RUN needs a build', 'FROM ubuntu\nRUN <<EOF\necho\nEOF\n', 'build'],
  ["heredoc <<-'X' needs a build", "FROM ubuntu\nRUN cat <<-'X' > f\n", 'build'],
  ['an empty RUN needs a build', 'FROM ubuntu\nRUN\n', 'build'],
  ['a bad exec-form RUN needs a build', 'FROM ubuntu\nRUN ["echo", 1]\n', 'build'],
  ['an empty exec-form RUN needs a build', 'FROM ubuntu\nRUN []\n', 'build'],
  ['a non-empty ENTRYPOINT needs a build', 'FROM ubuntu\nENTRYPOINT ["/e.sh"]\n', 'build'],
  ['a non-empty CMD needs a build', 'FROM ubuntu\nCMD ["bash"]\n', 'build'],
  ['HEALTHCHECK needs a build', 'FROM ubuntu\nHEALTHCHECK CMD true\n', 'build'],
  ['EXPOSE needs a build', 'FROM ubuntu\nEXPOSE 80\n', 'build'],
  ['VOLUME needs a build', 'FROM ubuntu\nVOLUME /x\n', 'build'],
  ['SHELL needs a build', 'FROM ubuntu\nSHELL ["/bin/bash", "-c"]\n', 'build'],
  ['STOPSIGNAL needs a build', 'FROM ubuntu\nSTOPSIGNAL SIGTERM\n', 'build'],
  ['ARG after FROM needs a build', 'FROM ubuntu\nARG X=1\n', 'build'],
];

describe('classifyDockerfile modes (Task Folder Format § Dockerfile modes; NeMo Gym 0.7)', () => {
  for (const [name, text, mode] of modes) {
    it(`${name} → ${mode}`, () => {
      const c = classifyDockerfile(text);
      expect(c.mode).toBe(mode);
      if (mode === 'build') expect(c.buildReason).toBeTruthy();
      else expect(c.buildReason).toBeNull();
    });
  }
});

describe('classifyDockerfile settings (NeMo Gym 0.7, 3.5)', () => {
  it('joins continuations and drops blank and comment lines inside them', () => {
    const lines = logicalLines('FROM ubuntu\nRUN apt-get update \\\n# a comment\n\n    && apt-get install -y x\n');
    expect(lines).toHaveLength(2);
    expect(lines[1]).toEqual({ keyword: 'RUN', args: 'apt-get update     && apt-get install -y x', line: 2 });
  });

  it('keeps FROM, WORKDIR, ENV, USER and RUN in order, each RUN with the env, workdir and user at its position', () => {
    const c = classifyDockerfile(
      ['FROM python:3.12-slim', 'RUN a', 'WORKDIR /app', 'ENV A=1 B="two words"', 'RUN b', 'USER agent', 'WORKDIR sub', 'ENV A 2 3', 'RUN ["c", "d e"]'].join('\n'),
    );
    expect(c.mode).toBe('overlay');
    expect(c.from).toBe('python:3.12-slim');
    expect(c.instructions.map((i) => i.keyword)).toEqual(['FROM', 'RUN', 'WORKDIR', 'ENV', 'RUN', 'USER', 'WORKDIR', 'ENV', 'RUN']);
    expect(c.runs).toEqual([
      { command: 'a', workdir: null, user: null, line: 2 },
      { command: 'b', workdir: '/app', user: null, line: 5 },
      { command: "c 'd e'", workdir: '/app/sub', user: 'agent', line: 9 },
    ]);
    expect(c.workdir).toBe('/app/sub');
    expect(c.user).toBe('agent');
    expect(c.env).toEqual({ A: '2 3', B: '"two words"' });
    expect(resolveDockerfileEnv(c.instructions, { PATH: '/bin' })).toEqual({
      env: { PATH: '/bin', A: '2 3', B: 'two words' },
      runs: [{ PATH: '/bin' }, { PATH: '/bin', A: '1', B: 'two words' }, { PATH: '/bin', A: '2 3', B: 'two words' }],
    });
  });

  it('ENV values stay as written for seed-time resolution against the base image (NeMo Gym 0.7)', () => {
    expect(parseEnvArgs('PATH=/x:$PATH')).toEqual([['PATH', '/x:$PATH']]);
    expect(parseEnvArgs('A')).toBeNull();
    expect(parseEnvArgs('KEY some value here')).toEqual([['KEY', 'some value here']]);
    expect(parseEnvArgs('A="two words" B=\'$x\'')).toEqual([['A', '"two words"'], ['B', "'$x'"]]);
    expect(parseEnvArgs('A=1 B')).toBeNull();
  });

  // What a pull- or overlay-mode file may hold and Berth still resolves exactly; the rest is left to a build.
  const toBuild: Array<[string, string]> = [
    ['ENV A=${X-d}', 'resolve the same on every Docker engine'],
    ['ENV A=${X:?must}', 'resolve the same on every Docker engine'],
    ['ENV A=${X#pre}', 'resolve the same on every Docker engine'],
    ['ENV A="unclosed', 'unclosed double quote'],
    ['ENV A=${}', 'bad substitution'],
    ['ENV A', 'ENV is not KEY=value'],
    ['ENV $K=1', 'ENV is not KEY=value'],
    ['WORKDIR $HOME/app', 'WORKDIR uses a variable'],
    ['USER ${U}', 'USER uses a variable'],
  ];
  for (const [line, reason] of toBuild) {
    it(`${line} → build (${reason})`, () => {
      const c = classifyDockerfile(`FROM ubuntu\n${line}\n`);
      expect(c.mode).toBe('build');
      expect(c.buildReason).toContain(reason);
    });
  }

  it('an escape parser directive leaves the file to a build; WORKDIR and USER lose Docker quotes', () => {
    expect(classifyDockerfile('# escape=`\nFROM ubuntu\nENV A=1\n').mode).toBe('build');
    expect(classifyDockerfile('# syntax=docker/dockerfile:1\nFROM ubuntu\nENV A=1\n').mode).toBe('pull');
    expect(classifyDockerfile('FROM ubuntu\nWORKDIR "/my dir"\nUSER \'agent\'\n')).toMatchObject({ workdir: '/my dir', user: 'agent' });
  });

  // Quotes are Docker's: single quotes are literal, \$ is a literal $, and $NAME / ${NAME} expand
  // against the environment accumulated so far.
  const expansions: Array<[string, Record<string, string>, string]> = [
    ['PATH=/x:$PATH', { PATH: '/bin' }, '/x:/bin'],
    ['P="/root/go/bin:${PATH}"', { PATH: '/bin' }, '/root/go/bin:/bin'],
    ["A='$HOME'", { HOME: '/root' }, '$HOME'],
    ['A=\\$HOME', { HOME: '/root' }, '$HOME'],
    ['A="q\\"r"', {}, 'q"r'],
    ['A="a\\nb"', {}, 'a\\nb'],
    ['A=${UNSET:-fallback}', {}, 'fallback'],
    ['A=${SET:+alt}', { SET: '1' }, 'alt'],
    ['A=$UNSET', {}, ''],
    ['A="two words"', {}, 'two words'],
    ['A=cost$', {}, 'cost$'],
  ];
  for (const [args, env, want] of expansions) {
    it(`ENV ${args} → ${JSON.stringify(want)}`, () => {
      const pairs = parseEnvArgs(args)!;
      expect(expandDockerfileValue(pairs[0]![1], env)).toBe(want);
    });
  }

  it('ENTRYPOINT [] is recorded as cleared', () => {
    expect(classifyDockerfile('FROM x\nENTRYPOINT []\n').entrypointCleared).toBe(true);
  });

  it('CRLF files classify the same', () => {
    expect(classifyDockerfile('FROM ubuntu\r\nWORKDIR /app\r\n')).toMatchObject({ mode: 'pull', workdir: '/app' });
  });
});

describe('image plan (Task Folder Format § Environment: docker_image; docs/design.md section 7 Images)', () => {
  it('docker_image beside a pull-mode Dockerfile: the image runs with the Dockerfile\'s WORKDIR, ENV and USER', () => {
    const t = expectTask(build({ 'task.toml': '[environment]\ndocker_image = "mine:1"\n', 'environment/Dockerfile': 'FROM base:1\nWORKDIR /w\nENV A=1\nUSER u\n' }));
    expect(t.image).toMatchObject({ mode: 'pull', image: 'mine:1', from: 'base:1', workdir: '/w', env: { A: '1' }, user: 'u' });
  });

  it('docker_image beside an overlay or build Dockerfile: the Dockerfile is ignored', () => {
    for (const df of ['FROM base\nRUN x\n', 'FROM base\nCOPY a b\n']) {
      const t = expectTask(build({ 'task.toml': '[environment]\ndocker_image = "mine:1"\n', 'environment/Dockerfile': df }));
      expect(t.image).toMatchObject({ mode: 'prebuilt', image: 'mine:1', runs: [], workdir: null, upload_environment_files: false });
      expect(t.image.note).toContain('ignored');
    }
  });

  it('a build-mode Dockerfile has no image until prepare builds it', () => {
    const t = expectTask(build({ 'environment/Dockerfile': 'FROM base\nCOPY a b\n' }));
    expect(t.image).toMatchObject({ mode: 'build', image: null, dockerfile: 'environment/Dockerfile' });
  });

  it('image aliases rewrite docker_image, FROM and the verifier image before anything else', () => {
    const aliases = { 'ubuntu:24.04': 'berth-base:bookworm', 'verifier:1': 'local/verifier:1' };
    const a = expectTask(build({}, { imageAliases: aliases }));
    expect(a.image).toMatchObject({ mode: 'pull', image: 'berth-base:bookworm', from: 'berth-base:bookworm', from_original: 'ubuntu:24.04' });
    const b = expectTask(build({ 'task.toml': '[environment]\ndocker_image = "docker.io/library/ubuntu:24.04"\n[verifier.environment]\ndocker_image = "verifier:1"\n', 'environment/Dockerfile': undefined }, { imageAliases: aliases }));
    expect(b.environment.docker_image).toBe('berth-base:bookworm');
    expect(b.verifier.image).toEqual({ kind: 'prebuilt', ref: 'local/verifier:1' });
  });
});
