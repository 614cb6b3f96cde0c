// The relay that reaches an http MCP server on main's own localhost from inside main (issue 22; src/agents/openai/
// mcp-relay.ts), on the real engine: which URLs it takes, a request answered by a server that listens only on the
// sandbox's loopback, the message when nothing listens there, and a lost sandbox that stays a lost sandbox (the
// episode masks) rather than a tool error.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dialThroughMain, reachedInMain } from '../../src/agents/openai/mcp-relay.ts';
import { runMcpTool, type McpToolBinding, type StdioStarter } from '../../src/agents/index.ts';
import { SandboxLost, type SandboxHandle } from '../../src/sandbox/index.ts';
import { provider, seedPlain, teardownAll, tempDir } from './helpers.ts';
import { join } from 'node:path';
import { writeFile } from 'node:fs/promises';

describe('reachedInMain', () => {
  it.each([
    ['http://localhost:8000/mcp', true],
    ['http://LOCALHOST:8000/mcp', true],
    ['http://127.0.0.1:8000/sse', true],
    ['http://127.1.2.3/sse', true],
    ['http://[::1]:8000/mcp', true],
    ['http://main:8000/mcp', true],
    ['http://mcp:8000/mcp', false],
    ['http://mainframe:8000/mcp', false],
    ['http://10.0.0.5:8000/mcp', false],
    ['https://example.com/mcp', false],
    ['not a url', false],
  ])('%s → %s', (url, want) => {
    expect(reachedInMain(url)).toBe(want);
  });
});

describe('dialThroughMain on the real engine', () => {
  const made: string[] = [];
  let handle: SandboxHandle;
  let start: StdioStarter;
  const PORT = 18741;
  beforeAll(async () => {
    handle = await seedPlain(made);
    start = (argv) => provider.execWithStdin(handle, { argv, timeoutSec: 60 });
    // A server on the sandbox's loopback only, detached from the exec that starts it.
    await provider.exec(handle, { command: `mkdir -p /srv/www && echo hello-from-main > /srv/www/greeting.txt && (setsid python3 -m http.server --bind 127.0.0.1 --directory /srv/www ${PORT} >/dev/null 2>&1 &)` });
    await provider.exec(handle, { command: `for i in $(seq 50); do python3 -c "import socket; socket.create_connection(('127.0.0.1', ${PORT}))" 2>/dev/null && exit 0; sleep 0.1; done; exit 1` });
  }, 120_000);
  afterAll(async () => { await teardownAll(made); });

  it('answers a GET made inside main with the server\'s status, headers and body', async () => {
    const res = await dialThroughMain(start)(`http://localhost:${PORT}/greeting.txt`, { method: 'GET', headers: { accept: 'text/plain' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(await res.text()).toBe('hello-from-main\n');
    const missing = await dialThroughMain(start)(`http://127.0.0.1:${PORT}/nothing`, {});
    expect(missing.status).toBe(404);
    await missing.text();
  });

  it('says the request failed inside main when nothing listens there', async () => {
    await expect(dialThroughMain(start)('http://127.0.0.1:1/mcp', { method: 'POST', body: '{}' }))
      .rejects.toThrow(/POST http:\/\/127.0.0.1:1\/mcp from inside main failed: ConnectionRefusedError/);
  });

  it('a lost sandbox stays SandboxLost through a tool call, so the episode masks', async () => {
    const lost = await seedPlain(made);
    await provider.teardown(lost.name);
    const conversation = join(await tempDir(), 'conversation.jsonl');
    await writeFile(conversation, '');
    const binding: McpToolBinding = {
      name: 'local__get_secret', server: 'local', transport: 'streamable-http', url: `http://localhost:${PORT}/mcp`,
      tool: 'get_secret', description: '', parameters: {},
    };
    const startLost: StdioStarter = (argv) => provider.execWithStdin(lost, { argv, timeoutSec: 60 });
    await expect(runMcpTool(binding, { id: 'call_1', name: binding.name, arguments: {} }, conversation, { startStdio: startLost, timeoutSec: 30 }))
      .rejects.toBeInstanceOf(SandboxLost);
  });
});
