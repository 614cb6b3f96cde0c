// Installed agents in training mode (issue 41): claude-code (Anthropic Messages, streamed) and codex (OpenAI
// Responses, streamed) run for real in their layers on examples/hello; the worker's gateway translates their calls
// to a fake vLLM policy's Chat Completions and back, and leaves token records beside the episode's logs.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseTokenRecords } from '../../src/tokens/index.ts';
import { FakePolicy } from '../helpers/fake-policy.ts';
import { startTestWorkers, type TestCluster } from '../helpers/temporal.ts';
import { helloDataset, runHello } from './installed-run.ts';

const WRITE = "echo 'Hello, world!' > hello.txt";
const SHELLS: Record<string, (cmd: string) => Record<string, unknown>> = {
  Bash: (command) => ({ command, description: 'write the greeting' }),
  exec_command: (cmd) => ({ cmd }),
  shell: (command) => ({ command: ['bash', '-lc', command] }),
  shell_command: (command) => ({ command }),
};

describe('installed agents in training mode', () => {
  let cluster: TestCluster;
  let engine: FakePolicy;
  const hello = helloDataset();
  beforeAll(async () => {
    engine = await new FakePolicy({
      model: 'policy-7b', version: 'w1',
      script: ({ messages, tools }) => {
        const names = tools.map((t) => String((t['function'] as Record<string, unknown>)['name']));
        const shell = Object.keys(SHELLS).find((n) => names.includes(n));
        if (!shell || messages.some((m) => m['role'] === 'tool')) return { content: 'hello.txt is written.' };
        return { content: '', toolCalls: [{ name: shell, arguments: SHELLS[shell]!(WRITE) }] };
      },
    }).start();
    cluster = await startTestWorkers('installed-training');
  }, 120_000);
  afterAll(async () => {
    await cluster?.stop();
    await engine?.stop();
  });

  for (const { agent, dialect } of [{ agent: 'claude-code' as const, dialect: 'anthropic-messages' }, { agent: 'codex' as const, dialect: 'openai-responses' }]) {
    it(`${agent}: scores 1 through the policy, and its calls leave exact token records`, async () => {
      const { rows } = await runHello(cluster, hello, agent, 'policy-7b', {
        prepare: false, training: { runWorkflowId: '', endpoint: engine.url, model: 'policy-7b', version: 7, sampling: { temperature: 0.8 } },
      });
      const row = rows[0]!;
      expect(row, row.failure_reason ?? '').toMatchObject({ reward: 1, mask_sample: false });
      expect(row.training).toMatchObject({ tokens: 'token-records.jsonl', first_version: 7, last_version: 7, exact: true });
      const records = parseTokenRecords(readFileSync(join(row.logs_dir!, 'token-records.jsonl'), 'utf8'));
      expect(records.length).toBe(row.training!.calls);
      expect(records.length).toBeGreaterThanOrEqual(2);
      expect(new Set(records.map((r) => r.dialect))).toEqual(new Set([dialect]));
      expect(records.every((r) => r.capture_error === null && r.generation_token_ids.length > 0)).toBe(true);
      // The call that carried the tool's result extends the call that asked for the tool.
      const rollout = JSON.parse(readFileSync(join(row.logs_dir!, 'token-rollout.json'), 'utf8')) as { links: Array<{ parent_resolution: string }> };
      expect(rollout.links.some((l) => l.parent_resolution === 'resolved')).toBe(true);
    }, 900_000);
  }
});
