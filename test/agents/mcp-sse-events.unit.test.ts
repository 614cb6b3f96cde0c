// The event-stream parser MCP's sse transport and streamable-http's stream answers read (HTML standard § 9.2.6,
// "Interpreting an event stream"), and the pure pieces of the sse client around it.
import { describe, expect, it } from 'vitest';
import { parseSse, SseParser, type SseEvent } from '../../src/agents/openai/sse-events.ts';
import { postUrlOf } from '../../src/agents/openai/mcp-sse.ts';
import { answerInBody } from '../../src/agents/openai/mcp-http.ts';
import { LineSplitter } from '../../src/agents/openai/mcp-stdio.ts';
import { McpError, PendingRequests, type RpcMessage } from '../../src/agents/openai/mcp-rpc.ts';

describe('parseSse', () => {
  const cases: Array<{ name: string; text: string; events: SseEvent[] }> = [
    { name: 'an endpoint event (MCP 2024-11-05)', text: 'event: endpoint\ndata: /messages/?session_id=ab12\n\n', events: [{ event: 'endpoint', data: '/messages/?session_id=ab12' }] },
    { name: 'no event field is a message', text: 'data: {"id":1}\n\n', events: [{ event: 'message', data: '{"id":1}' }] },
    { name: 'CRLF line ends', text: 'event: message\r\ndata: a\r\n\r\n', events: [{ event: 'message', data: 'a' }] },
    { name: 'bare CR line ends', text: 'event: message\rdata: a\r\r', events: [{ event: 'message', data: 'a' }] },
    { name: 'data lines join with LF', text: 'data: one\ndata: two\n\n', events: [{ event: 'message', data: 'one\ntwo' }] },
    { name: 'only one leading space is dropped', text: 'data:  two spaces\n\n', events: [{ event: 'message', data: ' two spaces' }] },
    { name: 'no space after the colon', text: 'data:tight\n\n', events: [{ event: 'message', data: 'tight' }] },
    { name: 'comments (keep-alives) are skipped', text: ': ping\n\ndata: x\n\n', events: [{ event: 'message', data: 'x' }] },
    { name: 'an event with no data is not dispatched, and its type does not leak', text: 'event: endpoint\n\ndata: x\n\n', events: [{ event: 'message', data: 'x' }] },
    { name: 'a field with no colon is a field with an empty value', text: 'data\ndata\n\n', events: [{ event: 'message', data: '\n' }] },
    { name: 'unknown fields and retry are ignored', text: 'retry: 3000\nfoo: bar\ndata: x\n\n', events: [{ event: 'message', data: 'x' }] },
    { name: 'the last id stays with later events', text: 'id: 7\ndata: a\n\ndata: b\n\n', events: [{ event: 'message', data: 'a', id: '7' }, { event: 'message', data: 'b', id: '7' }] },
    { name: 'an id with NUL is ignored', text: 'id: a\u0000b\ndata: a\n\n', events: [{ event: 'message', data: 'a' }] },
    { name: 'a leading BOM is dropped', text: '\uFEFFdata: a\n\n', events: [{ event: 'message', data: 'a' }] },
    { name: 'a last event without its blank line is still read', text: 'event: message\ndata: last', events: [{ event: 'message', data: 'last' }] },
    { name: 'two events back to back', text: 'event: endpoint\ndata: /m\n\nevent: message\ndata: {}\n\n', events: [{ event: 'endpoint', data: '/m' }, { event: 'message', data: '{}' }] },
  ];
  it.each(cases)('$name', ({ text, events }) => {
    expect(parseSse(text)).toEqual(events);
  });
});

describe('SseParser fed in pieces', () => {
  const text = 'event: endpoint\r\ndata: /messages?s=1\r\n\r\n: keep-alive\r\n\r\nevent: message\r\ndata: {"jsonrpc":"2.0","id":1}\r\n\r\n';
  const whole = parseSse(text);
  const splits: Array<{ name: string; pieces: string[] }> = [
    { name: 'one character at a time', pieces: [...text] },
    { name: 'split between CR and LF', pieces: [text.slice(0, text.indexOf('\r') + 1), text.slice(text.indexOf('\r') + 1)] },
    { name: 'split inside a field name', pieces: [text.slice(0, 3), text.slice(3)] },
    { name: 'split at every CR', pieces: text.split(/(?<=\r)/) },
  ];
  it.each(splits)('$name reads the same events as the whole text', ({ pieces }) => {
    const p = new SseParser();
    const got = [...pieces.flatMap((piece) => p.push(piece)), ...p.end()];
    expect(got).toEqual(whole);
    expect(got.map((e) => e.event)).toEqual(['endpoint', 'message']);
  });

  it('an event completes only at its blank line', () => {
    const p = new SseParser();
    expect(p.push('data: a\n')).toEqual([]);
    expect(p.push('\n')).toEqual([{ event: 'message', data: 'a' }]);
  });
});

describe('postUrlOf: where the sse client POSTs', () => {
  const cases = [
    { stream: 'http://172.18.0.3:8000/sse', endpoint: '/messages/?session_id=ab', want: 'http://172.18.0.3:8000/messages/?session_id=ab' },
    { stream: 'http://172.18.0.3:8000/mcp/sse', endpoint: 'messages?s=1', want: 'http://172.18.0.3:8000/mcp/messages?s=1' },
    // The server names itself by the service name the worker cannot resolve: the origin reached is kept.
    { stream: 'http://172.18.0.3:8000/sse', endpoint: 'http://mcp:8000/messages?s=2', want: 'http://172.18.0.3:8000/messages?s=2' },
    { stream: 'http://127.0.0.1:9/sse', endpoint: ' /m?x=1 \n', want: 'http://127.0.0.1:9/m?x=1' },
  ];
  it.each(cases)('$endpoint from $stream', ({ stream, endpoint, want }) => {
    expect(postUrlOf(stream, endpoint)).toBe(want);
  });
});

describe('answerInBody: a streamable-http POST answered as a stream', () => {
  it('skips the server\'s own requests and notifications before the answer', () => {
    const body = [
      'event: message\ndata: {"jsonrpc":"2.0","method":"notifications/progress","params":{}}\n\n',
      'event: message\ndata: {"jsonrpc":"2.0","id":3,"method":"ping"}\n\n',
      'event: message\ndata: {"jsonrpc":"2.0","id":3,"result":{"ok":true}}\n\n',
    ].join('');
    expect(answerInBody('text/event-stream', body, 3)).toEqual({ jsonrpc: '2.0', id: 3, result: { ok: true } });
  });
  it('a stream without the answer is an error saying so', () => {
    expect(() => answerInBody('text/event-stream', 'data: {"jsonrpc":"2.0","id":9,"result":{}}\n\n', 3)).toThrow(/ended without the answer/);
  });
});

describe('LineSplitter: stdio messages are lines', () => {
  const cases = [
    { name: 'one line in two pieces', pieces: ['{"a"', ':1}\n'], lines: ['{"a":1}'] },
    { name: 'two lines in one piece', pieces: ['{}\n{}\n'], lines: ['{}', '{}'] },
    { name: 'CRLF and blank lines', pieces: ['{}\r\n\r\n'], lines: ['{}'] },
    { name: 'no newline yet', pieces: ['{}'], lines: [] },
  ];
  it.each(cases)('$name', ({ pieces, lines }) => {
    const s = new LineSplitter();
    expect(pieces.flatMap((p) => s.push(p))).toEqual(lines);
  });
});

describe('PendingRequests', () => {
  it('matches answers by id, answers a ping, refuses other server requests, and fails what waits when the stream ends', async () => {
    const p = new PendingRequests();
    const sent: RpcMessage[] = [];
    const replies: RpcMessage[] = [];
    const a = p.call('tools/list', {}, async (m) => { sent.push(m); });
    const b = p.call('tools/call', { name: 'x' }, async (m) => { sent.push(m); });
    await Promise.resolve();
    expect(sent.map((m) => [m.id, m.method])).toEqual([[1, 'tools/list'], [2, 'tools/call']]);
    p.receive({ jsonrpc: '2.0', id: 5, method: 'ping' }, (m) => replies.push(m));
    p.receive({ jsonrpc: '2.0', id: 6, method: 'sampling/createMessage' }, (m) => replies.push(m));
    p.receive({ jsonrpc: '2.0', method: 'notifications/message' }, (m) => replies.push(m));
    p.receive({ jsonrpc: '2.0', id: 2, error: { code: -32602, message: 'bad arguments' } }, () => undefined);
    p.receive({ jsonrpc: '2.0', id: 1, result: { tools: [] } }, () => undefined);
    await expect(a).resolves.toEqual({ tools: [] });
    await expect(b).rejects.toThrow('tools/call failed: bad arguments');
    expect(replies).toEqual([{ jsonrpc: '2.0', id: 5, result: {} }, { jsonrpc: '2.0', id: 6, error: { code: -32601, message: 'the client does not offer sampling/createMessage' } }]);
    const c = p.call('tools/call', {}, async () => undefined);
    p.end(new McpError('the server exited with code 1'));
    await expect(c).rejects.toThrow('the server exited with code 1');
    await expect(p.call('tools/call', {}, async () => undefined)).rejects.toThrow('the server exited with code 1');
  });

  it('a send that fails fails its request', async () => {
    const p = new PendingRequests();
    await expect(p.call('initialize', {}, async () => { throw new McpError('HTTP 500'); })).rejects.toThrow('HTTP 500');
  });
});
