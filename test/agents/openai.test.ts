import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  appendRecord,
  callModel,
  ContextLengthExceeded,
  harnessFor,
  ModelCallFailed,
  ModelRequestRejected,
  readConversation,
  runBashTool,
  runOpenAiTurnLocally,
  startConversation,
} from '../../src/agents/index.ts';
import type { SandboxHandle } from '../../src/sandbox/types.ts';
import type { Task } from '../../src/task/index.ts';
import { validateAtif } from '../../src/trajectory/atif.ts';
import { loadTestTask, makeCtx, provider, seedAsAgentUser, sh, teardownAll, tempDir, writeTask } from './helpers.ts';
import { bashCall, contextTooLong, contextTooLongVllm, finalMessage, rateLimited, startScriptedServer, type ScriptedServer } from './scripted-openai.ts';

const KEY_ENV = 'BERTH_AGENTS_TEST_OPENAI_KEY';
const KEY = 'sk-test-8c1f0a9d4e2b7f3a';
const made: string[] = [];
const servers: ScriptedServer[] = [];
let handle: SandboxHandle;
let task: Task;

beforeAll(async () => {
  process.env[KEY_ENV] = KEY;
  task = await loadTestTask(
    await writeTask({
      'task.toml': '[agent]\ntimeout_sec = 120\n[environment]\ndocker_image = "berth-base:bookworm"\n',
      'instruction.md': 'Create /work/made.txt containing ok, then say done.\n',
      'tests/test.sh': 'true\n',
    }),
  );
  handle = await seedAsAgentUser(made);
});
afterAll(async () => {
  delete process.env[KEY_ENV];
  await Promise.all(servers.map((s) => s.close()));
  await teardownAll(made);
});

async function serve(script: Parameters<typeof startScriptedServer>[0]): Promise<ScriptedServer> {
  const s = await startScriptedServer(script);
  servers.push(s);
  return s;
}

const fastRetry = { baseDelayMs: 1, maxDelayMs: 5 };

describe('openai agent loop', () => {
  it('retries a 429, runs the bash call in the sandbox, and ends with the final message', async () => {
    const server = await serve([
      rateLimited,
      bashCall('call_make_1', 'echo ok > /work/made.txt && whoami'),
      finalMessage('done: /work/made.txt holds ok'),
    ]);
    const ctx = await makeCtx(handle, task, { user: 'agent', workdir: '/work' });
    const res = await runOpenAiTurnLocally(ctx, { baseUrl: server.baseUrl, model: 'scripted-model', apiKeyEnv: KEY_ENV, retry: fastRetry });

    expect(await sh(handle, 'cat /work/made.txt && stat -c %U /work/made.txt')).toBe('ok\nagent\n');
    expect(res.responseText).toBe('done: /work/made.txt holds ok');
    expect(res.timedOut).toBe(false);
    expect(res.usage).toEqual({ promptTokens: 250, completionTokens: 30, calls: 2 });

    expect(server.requests).toHaveLength(3);
    expect(server.requests[1]!.body).toEqual(server.requests[0]!.body); // the retry resent the same request
    const first = server.requests[0]!;
    expect(first.url).toBe('/v1/chat/completions');
    expect(first.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(first.body.model).toBe('scripted-model');
    expect(first.body.tools).toEqual([expect.objectContaining({ type: 'function', function: expect.objectContaining({ name: 'bash' }) })]);
    expect(first.body.messages.map((m) => m['role'])).toEqual(['system', 'user']);
    expect(first.body.messages[1]!['content']).toBe(ctx.instruction);
    const toolMsg = server.requests[2]!.body.messages.at(-1)!;
    expect(toolMsg).toMatchObject({ role: 'tool', tool_call_id: 'call_make_1' });
    expect(toolMsg['content']).toContain('exit code: 0');
    expect(toolMsg['content']).toContain('agent');

    const file = readFileSync(join(ctx.logsDir, 'conversation.jsonl'), 'utf8');
    expect(file).not.toContain(KEY);
    expect(file.trim().split('\n')).toHaveLength(5); // system, user, assistant, tool, assistant

    expect(validateAtif(res.trajectory)).toEqual({ ok: true });
    expect(res.trajectory.schema_version).toBe('ATIF-v1.7');
    expect(res.trajectory.steps.map((s) => s.source)).toEqual(['system', 'user', 'agent', 'agent']);
    expect(res.trajectory.steps[2]!.observation?.results[0]).toMatchObject({ source_call_id: 'call_make_1' });
    expect(res.trajectory.final_metrics).toMatchObject({ total_prompt_tokens: 250, total_completion_tokens: 30 });
    expect(JSON.parse(readFileSync(join(ctx.logsDir, 'trajectory.json'), 'utf8'))).toEqual(res.trajectory);
  });

  it('stops at max_calls when the model never stops calling tools', async () => {
    const server = await serve((n) => bashCall(`call_loop_${n}`, `echo ${n} >> /work/loop.txt`));
    const ctx = await makeCtx(handle, task, {
      user: 'agent',
      workdir: '/work',
      args: { base_url: server.baseUrl, model: 'scripted-model', api_key_env: KEY_ENV, max_calls: '2' },
    });
    const res = await harnessFor('openai').runTurn(ctx);
    expect(res.callLimitReached).toBe(true);
    expect(server.requests).toHaveLength(2);
    expect(await sh(handle, 'cat /work/loop.txt')).toBe('0\n1\n');
    expect(res.responseText).toBe('');
    expect(validateAtif(res.trajectory)).toEqual({ ok: true });
  });
});

describe('openai loop budget', () => {
  it('ends the turn as timed out when the model does not answer within the budget', async () => {
    const server = await serve([{ ...finalMessage('too late'), delayMs: 10_000 }]);
    const ctx = await makeCtx(handle, task, { user: 'agent', workdir: '/work', timeoutSec: 1 });
    const started = Date.now();
    const res = await runOpenAiTurnLocally(ctx, { baseUrl: server.baseUrl, model: 'scripted-model', apiKeyEnv: KEY_ENV });
    expect(Date.now() - started).toBeLessThan(5000);
    expect(res).toMatchObject({ timedOut: true, responseText: '' });
    expect(validateAtif(res.trajectory)).toEqual({ ok: true });
  });
});

describe('openai loop recovery', () => {
  it('runs the tool calls an earlier attempt left unanswered before calling the model again', async () => {
    const path = join(await tempDir(), 'conversation.jsonl');
    await startConversation(path, { instruction: 'two commands' });
    const message = {
      role: 'assistant' as const,
      content: null,
      tool_calls: [
        { id: 'call_a', type: 'function' as const, function: { name: 'bash', arguments: JSON.stringify({ command: 'echo a >> /work/recover.txt' }) } },
        { id: 'call_b', type: 'function' as const, function: { name: 'bash', arguments: JSON.stringify({ command: 'echo b >> /work/recover.txt' }) } },
      ],
    };
    await appendRecord(path, { message, usage: { promptTokens: 10, completionTokens: 5 } });
    await appendRecord(path, { message: { role: 'tool', tool_call_id: 'call_a', content: 'exit code: 0' } });
    const server = await serve([finalMessage('recovered')]);
    const ctx = await makeCtx(handle, task, { user: 'agent', workdir: '/work' });
    const res = await runOpenAiTurnLocally(ctx, { baseUrl: server.baseUrl, model: 'scripted-model', apiKeyEnv: KEY_ENV, conversationPath: path });
    expect(await sh(handle, 'cat /work/recover.txt')).toBe('b\n');
    expect(server.requests).toHaveLength(1);
    expect(server.requests[0]!.body.messages.slice(-2).map((m) => m['tool_call_id'])).toEqual(['call_a', 'call_b']);
    expect(res.responseText).toBe('recovered');
    expect(validateAtif(res.trajectory)).toEqual({ ok: true });
  });
});

describe('openai pieces', () => {
  async function conversation(): Promise<string> {
    const path = join(await tempDir(), 'conversation.jsonl');
    await startConversation(path, { instruction: 'hi' });
    return path;
  }

  it('turns a context-length error into ContextLengthExceeded with the reason, in both error shapes', async () => {
    for (const reply of [contextTooLong, contextTooLongVllm]) {
      const server = await serve([reply]);
      const err = await callModel({ conversationPath: await conversation(), baseUrl: server.baseUrl, model: 'm', apiKeyEnv: KEY_ENV }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ContextLengthExceeded);
      expect((err as ContextLengthExceeded).reason).toMatch(/no longer fits model m's context window.*maximum context length/);
      expect(server.requests).toHaveLength(1);
    }
  });

  it('gives up with ModelCallFailed after the attempts, and never puts the key in an error', async () => {
    const failing = await serve(() => ({ status: 503, body: { error: { message: 'overloaded', type: 'server_error', code: null } } }));
    const path = await conversation();
    const err = await callModel({ conversationPath: path, baseUrl: failing.baseUrl, model: 'm', apiKeyEnv: KEY_ENV, retry: { ...fastRetry, maxAttempts: 3 } }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ModelCallFailed);
    expect((err as ModelCallFailed).attempts).toBe(3);
    expect(failing.requests).toHaveLength(3);
    expect(await readConversation(path)).toHaveLength(1);

    const echoing = await serve((_n, req) => ({ status: 401, body: { error: { message: `bad key ${req.headers.authorization}`, type: 'auth', code: 'invalid_api_key' } } }));
    const rejected = await callModel({ conversationPath: path, baseUrl: echoing.baseUrl, model: 'm', apiKeyEnv: KEY_ENV }).catch((e: unknown) => e);
    expect(rejected).toBeInstanceOf(ModelRequestRejected);
    expect((rejected as Error).message).toContain('[REDACTED]');
    expect((rejected as Error).message).not.toContain(KEY);
  });

  it('replays an answer already in the file instead of calling again', async () => {
    const server = await serve([bashCall('call_r', 'true')]);
    const path = await conversation();
    const opts = { conversationPath: path, baseUrl: server.baseUrl, model: 'm', apiKeyEnv: KEY_ENV };
    const a = await callModel(opts);
    const b = await callModel(opts);
    expect(server.requests).toHaveLength(1);
    expect(b).toMatchObject({ replayed: true, toolCalls: a.toolCalls });
  });

  it('runs a bash tool call once per id, and answers a bad call without running anything', async () => {
    const path = await conversation();
    const base = { provider, handle, user: 'agent', workdir: '/work', env: { N: '7' }, timeoutSec: 30, conversationPath: path };
    const call = { id: 'call_once', name: 'bash', arguments: { command: 'echo $N >> /work/once.txt; cat /work/once.txt' } };
    const first = await runBashTool({ ...base, call });
    const again = await runBashTool({ ...base, call });
    expect(first).toMatchObject({ exitCode: 0, reused: false });
    expect(again).toMatchObject({ reused: true, content: first.content });
    expect(await sh(handle, 'cat /work/once.txt')).toBe('7\n');

    const bad = await runBashTool({ ...base, call: { id: 'call_bad', name: 'bash', arguments: {}, argumentsError: 'the arguments are not valid JSON' } });
    expect(bad.content).toMatch(/not valid JSON/);
    const records = await readConversation(path);
    expect(records.filter((r) => r.message.role === 'tool')).toHaveLength(2);
  });

  it('ignores a record cut short by a crash and appends after it cleanly', async () => {
    const path = await conversation();
    writeFileSync(path, `${readFileSync(path, 'utf8')}{"message":{"role":"assis`);
    expect(await readConversation(path)).toHaveLength(1);
    const server = await serve([finalMessage('fine')]);
    const res = await callModel({ conversationPath: path, baseUrl: server.baseUrl, model: 'm', apiKeyEnv: KEY_ENV });
    expect(res.finalText).toBe('fine');
    expect((await readConversation(path)).map((r) => r.message.role)).toEqual(['user', 'assistant']);
  });
});
