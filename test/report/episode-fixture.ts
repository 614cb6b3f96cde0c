import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AtifTrajectory } from '../../src/trajectory/atif-types.ts';
import { validateAtif } from '../../src/trajectory/atif.ts';

export const TOOL_SCRIPT = '<script>window.__pwned = true</script><img src="http://example.invalid/x.png">';

/** A long listing: the viewer folds it. */
export const LONG_OUTPUT = Array.from({ length: 60 }, (_, i) => `line ${i + 1}: ${'x'.repeat(20)}`).join('\n');

export function trajectory(): AtifTrajectory {
  const t: AtifTrajectory = {
    schema_version: 'ATIF-v1.7',
    session_id: 'fixture-session',
    agent: { name: 'openai', version: '1.0.0', model_name: 'scripted-model' },
    steps: [
      { step_id: 1, source: 'system', message: 'You are an autonomous agent working in a Linux sandbox.' },
      { step_id: 2, source: 'user', message: 'Write ok to out.txt, then list the folder.' },
      {
        step_id: 3, source: 'agent', message: 'I will write the file first.', model_name: 'scripted-model',
        tool_calls: [{ tool_call_id: 'call_1', function_name: 'bash', arguments: { command: 'echo ok > /app/out.txt && cat /app/out.txt' } }],
        observation: { results: [{ source_call_id: 'call_1', content: `ok\n${TOOL_SCRIPT}` }] },
        metrics: { prompt_tokens: 120, completion_tokens: 14, cost_usd: 0.00042 },
      },
      {
        step_id: 4, source: 'agent', message: '', model_name: 'scripted-model',
        tool_calls: [{ tool_call_id: 'call_2', function_name: 'bash', arguments: { command: 'seq 1 60' } }],
        observation: { results: [{ source_call_id: 'call_2', content: LONG_OUTPUT }] },
        metrics: { prompt_tokens: 150, completion_tokens: 9, cost_usd: 0.0005 },
      },
      { step_id: 5, source: 'agent', message: 'done: wrote out.txt', model_name: 'scripted-model', metrics: { prompt_tokens: 400, completion_tokens: 6 } },
    ],
    final_metrics: { total_prompt_tokens: 670, total_completion_tokens: 29, total_cost_usd: 0.00092, total_steps: 5 },
  };
  const check = validateAtif(t);
  if (!check.ok) throw new Error(`fixture trajectory is not valid ATIF: ${check.errors.join('; ')}`);
  return t;
}

/** An episode logs folder as a worker leaves it: turn-1/agent/trajectory.json, turn-1/verifier/… */
export function episodeLogs(opts: { stdout: string; reward: string }): string {
  const dir = mkdtempSync(join(tmpdir(), 'berth-episode-logs-'));
  const turn = join(dir, 'turn-1');
  mkdirSync(join(turn, 'agent'), { recursive: true });
  mkdirSync(join(turn, 'verifier'), { recursive: true });
  writeFileSync(join(turn, 'agent', 'trajectory.json'), JSON.stringify(trajectory(), null, 2));
  writeFileSync(join(turn, 'agent', 'response.txt'), 'done: wrote out.txt');
  writeFileSync(join(turn, 'verifier', 'test-stdout.txt'), opts.stdout);
  writeFileSync(join(turn, 'verifier', 'reward.txt'), opts.reward);
  writeFileSync(join(turn, 'verifier', 'junit.xml'), '<testsuite/>');
  return dir;
}
