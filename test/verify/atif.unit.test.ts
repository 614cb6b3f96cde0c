import { describe, expect, it } from 'vitest';
import {
  ATIF_SCHEMA_VERSION,
  TrajectoryBuilder,
  agentStep,
  buildTrajectory,
  oracleTrajectory,
  userStep,
  validateAtif,
  type AtifTrajectory,
} from '../../src/trajectory/atif.ts';

const REF = 'Harbor 0.25';

function base(): any {
  return {
    schema_version: 'ATIF-v1.7',
    session_id: 'demo-1',
    agent: { name: 'demo-agent', version: '0.1.0', model_name: 'prov/model-a' },
    steps: [
      { step_id: 1, source: 'user', message: 'Create /app/out.txt containing ok.' },
      {
        step_id: 2,
        source: 'agent',
        message: 'Writing the file.',
        tool_calls: [{ tool_call_id: 't1', function_name: 'bash', arguments: { cmd: 'echo ok > /app/out.txt' } }],
        observation: { results: [{ source_call_id: 't1', content: '' }] },
        metrics: { prompt_tokens: 210, completion_tokens: 25 },
      },
      { step_id: 3, source: 'agent', message: 'Done.' },
    ],
    final_metrics: { total_prompt_tokens: 210, total_completion_tokens: 25, total_steps: 3 },
  };
}

class Replacement {
  constructor(readonly value: unknown) {}
}
const REPLACE = (value: unknown) => new Replacement(value);

function errorsOf(obj: unknown): string[] {
  const r = validateAtif(obj);
  return r.ok ? [] : r.errors;
}

describe(`validateAtif accepts valid trajectories (${REF})`, () => {
  const valid: Array<[string, (t: any) => void]> = [
    ['the minimal example', () => {}],
    ['no session_id in v1.7', (t) => delete t.session_id],
    ['an older version with session_id', (t) => (t.schema_version = 'ATIF-v1.5')],
    ['an empty message and empty arguments', (t) => {
      t.steps[0].message = '';
      t.steps[1].tool_calls[0].arguments = {};
    }],
    ['content parts, text and image', (t) => {
      t.steps[0].message = [
        { type: 'text', text: 'Look:' },
        { type: 'image', source: { media_type: 'image/png', path: 'images/a.png' } },
      ];
    }],
    ['observation results without a source and with null content', (t) => {
      t.steps[1].observation.results.push({ content: null }, {});
    }],
    ['an observation on a user step without source_call_id', (t) => {
      t.steps[0].observation = { results: [{ content: 'terminal output' }] };
    }],
    ['timestamps with offset, Z, and without zone', (t) => {
      t.steps[0].timestamp = '2026-01-02T03:04:05.123456+00:00';
      t.steps[1].timestamp = '2026-01-02T03:04:06Z';
      t.steps[2].timestamp = '2026-01-02T03:04:07';
    }],
    ['agent-only fields on an agent step, extra everywhere', (t) => {
      Object.assign(t.steps[2], { model_name: 'm', reasoning_effort: 'high', reasoning_content: 'hm', llm_call_count: 1, extra: { a: 1 } });
      t.extra = { x: [1] };
      t.agent.extra = {};
      t.agent.tool_definitions = [{ type: 'function', function: { name: 'bash' } }];
      t.notes = 'n';
      t.continued_trajectory_ref = 'trajectory-2.json';
    }],
    ['a scripted agent step (llm_call_count 0) without metrics', (t) => {
      t.steps[1].llm_call_count = 0;
      delete t.steps[1].metrics;
    }],
    ['subagent trajectories with unique ids and refs', (t) => {
      const sub = base();
      sub.trajectory_id = 'sub-1';
      const sub2 = base();
      sub2.trajectory_id = 'sub-2';
      t.subagent_trajectories = [sub, sub2];
      t.steps[1].observation.results[0].subagent_trajectory_ref = [{ trajectory_id: 'sub-1' }, { trajectory_path: 'x.json', session_id: 's' }];
    }],
  ];
  it.each(valid)('%s', (_name, mutate) => {
    const t = base();
    mutate(t);
    expect(errorsOf(t)).toEqual([]);
  });
});

describe(`validateAtif rejects invalid trajectories, naming the field (${REF})`, () => {
  const invalid: Array<[string, (t: any) => any, string]> = [
    ['not an object', () => REPLACE(null), '(trajectory)'],
    ['an array', () => REPLACE([]), '(trajectory)'],
    ['a string', () => REPLACE('{}'), '(trajectory)'],
    ['missing agent (required)', (t) => delete t.agent, 'agent'],
    ['missing steps (required)', (t) => delete t.steps, 'steps'],
    ['no steps (steps ≥ 1)', (t) => (t.steps = []), 'steps: must hold at least one step'],
    ['missing schema_version (required)', (t) => delete t.schema_version, 'schema_version'],
    ['unknown schema_version', (t) => (t.schema_version = 'ATIF-v2.0'), 'schema_version'],
    ['session_id missing in v1.6 (required up to v1.6)', (t) => {
      t.schema_version = 'ATIF-v1.6';
      delete t.session_id;
    }, 'session_id: required by ATIF-v1.6'],
    ['session_id a number', (t) => (t.session_id = 7), 'session_id'],
    ['agent.name missing', (t) => delete t.agent.name, 'agent.name'],
    ['agent.version a number', (t) => (t.agent.version = 1), 'agent.version'],
    ['unknown root key (extra="forbid")', (t) => (t.foo = 1), 'foo: unknown key'],
    ['unknown agent key', (t) => (t.agent.provider = 'x'), 'agent.provider: unknown key'],
    ['unknown step key', (t) => (t.steps[0].role = 'user'), 'steps[0].role: unknown key'],
    ['step_id not starting at 1', (t) => (t.steps[0].step_id = 0), 'steps[0].step_id'],
    ['step_id out of order', (t) => (t.steps[1].step_id = 3), 'steps[1].step_id: must be 2'],
    ['step ids repeated', (t) => (t.steps[2].step_id = 2), 'steps[2].step_id: must be 3'],
    ['step_id a string', (t) => (t.steps[0].step_id = '1'), 'steps[0].step_id'],
    ['step_id fractional', (t) => (t.steps[0].step_id = 1.5), 'steps[0].step_id'],
    ['source not system|user|agent', (t) => (t.steps[0].source = 'assistant'), 'steps[0].source'],
    ['message missing', (t) => delete t.steps[0].message, 'steps[0].message'],
    ['message a number', (t) => (t.steps[0].message = 3), 'steps[0].message: must be a string or a list of content parts'],
    ['text part without text', (t) => (t.steps[0].message = [{ type: 'text' }]), 'steps[0].message[0].text'],
    ['content part of an unknown type', (t) => (t.steps[0].message = [{ type: 'video' }]), 'steps[0].message[0].type: must be "text" or "image"'],
    ['observation content a number', (t) => (t.steps[1].observation.results[0].content = 5), 'steps[1].observation.results[0].content: must be'],
    ['image part with a bad media type', (t) => {
      t.steps[0].message = [{ type: 'image', source: { media_type: 'image/bmp', path: 'a.bmp' } }];
    }, 'steps[0].message[0].source.media_type'],
    ['tool_calls on a user step (agent-only)', (t) => (t.steps[0].tool_calls = []), 'steps[0].tool_calls: only agent steps'],
    ['metrics on a system step (agent-only)', (t) => {
      t.steps[0].source = 'system';
      t.steps[0].metrics = {};
    }, 'steps[0].metrics: only agent steps'],
    ['model_name on a user step (agent-only)', (t) => (t.steps[0].model_name = 'm'), 'steps[0].model_name'],
    ['tool call without function_name', (t) => delete t.steps[1].tool_calls[0].function_name, 'steps[1].tool_calls[0].function_name'],
    ['tool call without tool_call_id', (t) => delete t.steps[1].tool_calls[0].tool_call_id, 'steps[1].tool_calls[0].tool_call_id'],
    ['tool call arguments a string', (t) => (t.steps[1].tool_calls[0].arguments = '{}'), 'steps[1].tool_calls[0].arguments'],
    ['observation without results', (t) => (t.steps[1].observation = {}), 'steps[1].observation.results'],
    ['source_call_id naming no call of the step', (t) => (t.steps[1].observation.results[0].source_call_id = 't9'),
      'steps[1].observation.results[0].source_call_id'],
    ['source_call_id naming a call of another step', (t) => {
      t.steps[2].observation = { results: [{ source_call_id: 't1', content: 'x' }] };
    }, 'steps[2].observation.results[0].source_call_id'],
    ['metrics with llm_call_count 0', (t) => (t.steps[1].llm_call_count = 0), 'steps[1].metrics: not allowed'],
    ['reasoning_content with llm_call_count 0', (t) => Object.assign(t.steps[2], { llm_call_count: 0, reasoning_content: 'r' }),
      'steps[2].reasoning_content: not allowed'],
    ['negative llm_call_count', (t) => (t.steps[1].llm_call_count = -1), 'steps[1].llm_call_count'],
    ['is_copied_context not a bool', (t) => (t.steps[0].is_copied_context = 'yes'), 'steps[0].is_copied_context'],
    ['timestamp not ISO-8601', (t) => (t.steps[0].timestamp = 'yesterday'), 'steps[0].timestamp'],
    ['metrics with a fractional token count', (t) => (t.steps[1].metrics.prompt_tokens = 1.5), 'steps[1].metrics.prompt_tokens'],
    ['unknown metrics key', (t) => (t.steps[1].metrics.tokens = 1), 'steps[1].metrics.tokens: unknown key'],
    ['final_metrics.total_steps negative', (t) => (t.final_metrics.total_steps = -1), 'final_metrics.total_steps'],
    ['extra not an object', (t) => (t.extra = 'x'), 'extra'],
    ['subagent without trajectory_id', (t) => (t.subagent_trajectories = [base()]), 'subagent_trajectories[0].trajectory_id: required'],
    ['subagent trajectory_ids repeated', (t) => {
      const a = base();
      a.trajectory_id = 'same';
      const b = base();
      b.trajectory_id = 'same';
      t.subagent_trajectories = [a, b];
    }, 'subagent_trajectories[1].trajectory_id: "same" is already used'],
    ['a bad step inside a subagent', (t) => {
      const a = base();
      a.trajectory_id = 'a';
      a.steps[0].step_id = 5;
      t.subagent_trajectories = [a];
    }, 'subagent_trajectories[0].steps[0].step_id'],
    ['a subagent that is not an object', (t) => (t.subagent_trajectories = [42]), 'subagent_trajectories[0]:'],
    ['subagent_trajectory_ref without an id or path', (t) => {
      t.steps[1].observation.results[0].subagent_trajectory_ref = [{ session_id: 's' }];
    }, 'steps[1].observation.results[0].subagent_trajectory_ref[0]: needs trajectory_id or trajectory_path'],
  ];
  it.each(invalid)('%s', (_name, mutate, field) => {
    const t = base();
    const out = mutate(t);
    const errors = errorsOf(out instanceof Replacement ? out.value : t);
    expect(errors.length, 'expected the trajectory to be rejected').toBeGreaterThan(0);
    expect(errors.join('\n')).toContain(field);
  });
});

describe('buildTrajectory', () => {
  it('assigns step ids, pairs tool calls with observations and totals the metrics', () => {
    const t = buildTrajectory({
      sessionId: 's-1',
      agent: { name: 'openai', version: '1.0', model_name: 'm' },
      steps: [
        userStep('Fix the bug.', { timestamp: new Date('2026-01-01T00:00:00Z') }),
        agentStep({
          message: 'Looking.',
          toolCalls: [{ name: 'bash', arguments: { command: 'ls' }, output: 'a b' }, { name: 'bash', arguments: { command: 'true' } }],
          metrics: { prompt_tokens: 100, completion_tokens: 10, cost_usd: 0.5 },
        }),
        agentStep({ message: 'Done.', metrics: { prompt_tokens: 150, completion_tokens: 5, cost_usd: 0.25 } }),
      ],
    });
    expect(validateAtif(t)).toEqual({ ok: true });
    expect(t.schema_version).toBe(ATIF_SCHEMA_VERSION);
    expect(t.steps.map((s) => s.step_id)).toEqual([1, 2, 3]);
    expect(t.steps[0]).toEqual({ step_id: 1, source: 'user', message: 'Fix the bug.', timestamp: '2026-01-01T00:00:00.000Z' });
    expect(t.steps[1]!.tool_calls!.map((c) => c.tool_call_id)).toEqual(['call_2_1', 'call_2_2']);
    expect(t.steps[1]!.observation).toEqual({ results: [{ source_call_id: 'call_2_1', content: 'a b' }] });
    expect(t.final_metrics).toEqual({ total_prompt_tokens: 250, total_completion_tokens: 15, total_cost_usd: 0.75, total_steps: 3 });
    expect(JSON.stringify(t)).not.toContain('undefined');
  });

  it('TrajectoryBuilder collects steps as they come', () => {
    const b = new TrajectoryBuilder('s-2', { name: 'command', version: '0.1.0' });
    b.system('You are in /app.').user('Do it.').agentTurn({ message: 'ok', llmCallCount: 0 });
    const t = b.build({ notes: 'n' });
    expect(b.length).toBe(3);
    expect(t.steps.map((s) => s.source)).toEqual(['system', 'user', 'agent']);
    expect(t.final_metrics).toEqual({ total_steps: 3 });
    expect(validateAtif(t)).toEqual({ ok: true });
  });
});

describe('oracleTrajectory (docs/design.md section 7 "Formats")', () => {
  it('is a user step with the instruction and an agent step with the command and its output', () => {
    const t: AtifTrajectory = oracleTrajectory({
      sessionId: 'berth/b1/hello/0',
      instruction: 'Write hello to /app/out.txt',
      command: 'bash /solution/solve.sh',
      output: 'done\n',
      exitCode: 0,
    });
    expect(validateAtif(t)).toEqual({ ok: true });
    expect(t.agent.name).toBe('oracle');
    expect(t.steps).toHaveLength(2);
    const [user, agent] = t.steps;
    expect(user).toMatchObject({ step_id: 1, source: 'user', message: 'Write hello to /app/out.txt' });
    expect(agent).toMatchObject({ step_id: 2, source: 'agent', llm_call_count: 0, extra: { exit_code: 0 } });
    expect(agent!.tool_calls).toEqual([
      { tool_call_id: 'oracle_solve', function_name: 'bash', arguments: { command: 'bash /solution/solve.sh' } },
    ]);
    expect(agent!.observation).toEqual({ results: [{ source_call_id: 'oracle_solve', content: 'done\n' }] });
  });
});
