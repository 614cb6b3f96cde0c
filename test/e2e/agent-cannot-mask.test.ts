// Nothing the agent (or its test.sh) does inside the sandbox takes its row out of the score (issue 37, masking):
// real Temporal, real Docker, the oracle's solve.sh doing the hostile thing. Each task's solve.sh counts its runs in
// /root/runs and test.sh reports the count as `agent_runs`, so a retried turn shows.
//
// Harbor 0.25 on the same tiny tasks (a Dockerfile `FROM berth-base:bookworm` with `WORKDIR /app`, `harbor run -a
// oracle`, 2026-12-05): removing /logs/agent, or leaving a file there, scored 1 (Harbor only warned that it could
// not copy the agent's logs); removing /app ended the trial with RuntimeError "Failed to remove verifier reward
// files ... chdir to cwd ("/app") ... no such file or directory", counted as an error with mean 0.0; test.sh
// removing /logs/verifier ended it with DownloadVerifierDirError, mean 0.0. Berth scores what test.sh writes
// (docs/departures.md, Masking) and, where nothing is written, harbor:missing_reward, 0.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ResultRow } from '../../src/workflows/types.ts';
import { rowsByTask, startTestWorkers, type TestCluster } from '../helpers/temporal.ts';

const TOML = (verifierTimeout = 60) =>
  `[environment]\ndocker_image = "berth-base:bookworm"\nworkdir = "/app"\n[agent]\ntimeout_sec = 60\n[verifier]\ntimeout_sec = ${verifierTimeout}\n`;
const COUNT = 'echo run >> /root/runs';
/** reward.json with the reward and how many times solve.sh ran. */
const report = (reward: string) =>
  `printf '{"reward": %s, "agent_runs": %s}' "${reward}" "$(wc -l < /root/runs)" > /logs/verifier/reward.json`;

function task(id: string, solve: string, test: string, toml = TOML()): Record<string, string> {
  return {
    [`${id}/task.toml`]: toml,
    [`${id}/instruction.md`]: 'do it\n',
    [`${id}/solution/solve.sh`]: `#!/bin/bash\n${COUNT}\n${solve}\n`,
    [`${id}/tests/test.sh`]: `#!/bin/bash\necho "pwd: $(pwd)"\n${test}\n`,
  };
}

function steps(id: string, list: Array<{ solve: string; test: string }>): Record<string, string> {
  const files: Record<string, string> = {
    [`${id}/task.toml`]: `${TOML()}${list.map((_, i) => `[[steps]]\nname = "s${i + 1}"\n`).join('')}`,
  };
  list.forEach((s, i) => {
    files[`${id}/steps/s${i + 1}/instruction.md`] = `step ${i + 1}\n`;
    files[`${id}/steps/s${i + 1}/solution/solve.sh`] = `#!/bin/bash\n${COUNT}\n${s.solve}\n`;
    files[`${id}/steps/s${i + 1}/tests/test.sh`] = `#!/bin/bash\necho "pwd: $(pwd)"\n${s.test}\n`;
  });
  return files;
}

const wroteOut = report('$([ -f /root/out.txt ] && echo 1 || echo 0)');

describe('an agent cannot take its row out of the score', () => {
  let cluster: TestCluster;
  let rows = new Map<string, ResultRow>();
  beforeAll(async () => {
    cluster = await startTestWorkers('agent-cannot-mask');
    rows = await rowsByTask(cluster, {
      ...task('rm-agent-logs', 'echo done > /root/out.txt\nrm -rf /logs/agent', wroteOut),
      ...task('file-agent-logs', 'echo done > /root/out.txt\nrm -rf /logs/agent\necho planted > /logs/agent', wroteOut),
      ...task('rm-logs', 'echo done > /root/out.txt\nrm -rf /logs', wroteOut),
      ...task('kill-wrapper', 'echo done > /root/out.txt\npkill -9 -f berth-detached', wroteOut),
      ...task('rm-workdir-writes', 'cd / && rm -rf /app', `${report('0.5')}\n[ "$(pwd)" = / ] || echo "not run from /"`),
      ...task('rm-workdir-hook', 'cd / && rm -rf /app', report('$([ "$(cat /root/hook-pwd)" = / ] && echo 1 || echo 0)'),
        `${TOML()}[[verifier.collect]]\ncommand = "pwd > /root/hook-pwd"\n`),
      ...task('rm-workdir-silent', 'cd / && rm -rf /app', 'if [ -d /app ]; then echo 1 > /logs/verifier/reward.txt; fi'),
      ...task('rm-verifier-logs', 'true', 'echo 1 > /logs/verifier/reward.txt\nrm -rf /logs/verifier'),
      ...task('file-verifier-logs', 'true', 'echo 1 > /logs/verifier/reward.txt\nrm -rf /logs/verifier\necho 1 > /logs/verifier'),
      ...task('timeout-rm-verifier-logs', 'true', 'echo 1 > /logs/verifier/reward.txt\nrm -rf /logs/verifier\nsleep 60', TOML(3)),
      ...steps('steps-rm-workdir', [
        { solve: 'cd / && rm -rf /app', test: report('1') },
        { solve: 'pwd > /root/pwd2', test: report('$([ "$(cat /root/pwd2)" = / ] && echo 1 || echo 0)') },
      ]),
      ...steps('steps-dir-agent-output', [
        { solve: 'rm -f /logs/agent/oracle.txt && mkdir -p /logs/agent/oracle.txt/planted', test: report('1') },
        { solve: 'echo done > /root/out.txt', test: wroteOut },
      ]),
      ...steps('steps-file-agent-logs', [
        { solve: 'rm -rf /logs/agent\necho planted > /logs/agent', test: report('1') },
        { solve: 'echo done > /root/out.txt', test: wroteOut },
      ]),
    }, 'berth-t37-mask-');
  }, 900_000);
  afterAll(async () => { await cluster?.stop(); });

  const row = (id: string) => {
    const r = rows.get(id);
    if (!r) throw new Error(`no row for ${id}: ${[...rows.keys()].join(', ')}`);
    return r;
  };

  it('removing /logs/agent, or leaving a file there, or removing /logs, or killing Berth\'s wrapper of its process: the turn finishes once and is scored (Harbor: 1)', () => {
    for (const id of ['rm-agent-logs', 'file-agent-logs', 'rm-logs', 'kill-wrapper']) {
      expect(row(id), id).toMatchObject({ reward: 1, mask_sample: false, failure_kind: null, verifier_rewards: { reward: 1, agent_runs: 1 } });
    }
  });

  it('removing the working directory: test.sh and collect hooks run from / and the reward stands, 0 when none is written (Harbor: an error, mean 0)', () => {
    expect(row('rm-workdir-writes')).toMatchObject({ reward: 0.5, mask_sample: false, failure_kind: null, verifier_rewards: { agent_runs: 1 } });
    expect(row('rm-workdir-silent')).toMatchObject({ reward: 0, mask_sample: false, failure_kind: 'harbor:missing_reward' });
    // A collect hook runs from / too (Harbor: the hook's exec fails to start; hooks only warn there).
    expect(row('rm-workdir-hook')).toMatchObject({ reward: 1, mask_sample: false, failure_kind: null, verifier_rewards: { agent_runs: 1 } });
  });

  it('test.sh removing /logs/verifier, or leaving a file there: no reward file, 0 (Harbor: DownloadVerifierDirError, mean 0)', () => {
    for (const id of ['rm-verifier-logs', 'file-verifier-logs']) {
      expect(row(id), id).toMatchObject({ reward: 0, mask_sample: false, failure_kind: 'harbor:missing_reward' });
    }
    expect(row('timeout-rm-verifier-logs')).toMatchObject({ reward: 0, mask_sample: false, failure_kind: 'harbor:verifier_timeout' });
  });

  it('a later step runs and is verified after an earlier one left a folder where the oracle\'s output file goes', () => {
    expect(row('steps-dir-agent-output')).toMatchObject({ reward: 1, mask_sample: false, failure_kind: null });
    expect(row('steps-dir-agent-output').turns.map((t) => t.verifier_rewards)).toEqual([{ reward: 1, agent_runs: 1 }, { reward: 1, agent_runs: 2 }]);
  });

  it('a later step runs and is verified after an earlier one removed the working directory or planted a file at /logs/agent', () => {
    expect(row('steps-rm-workdir')).toMatchObject({ reward: 1, mask_sample: false, failure_kind: null });
    expect(row('steps-rm-workdir').turns.map((t) => t.verifier_rewards)).toEqual([{ reward: 1, agent_runs: 1 }, { reward: 1, agent_runs: 2 }]);
    expect(row('steps-file-agent-logs')).toMatchObject({ reward: 1, mask_sample: false, failure_kind: null });
    expect(row('steps-file-agent-logs').turns.map((t) => t.verifier_rewards)).toEqual([{ reward: 1, agent_runs: 1 }, { reward: 1, agent_runs: 2 }]);
  });
});
