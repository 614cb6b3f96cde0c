// Small MCP servers (python3, stdlib only) the MCP tests run in their sandboxes, each with one tool, get_secret, that
// answers `secret`. `bind` and `port` say where it listens (every address, port 8000, by default). And the scripted
// model that solves a task with such a tool.
import { bashCall, finalMessage, type RecordedRequest, type Reply } from '../agents/scripted-openai.ts';

// MCP's streamable-http transport, just enough of it: initialize (with a session id), tools/list, and
// tools/call answered as an event stream, as many servers do.
export const streamableHttpServer = (secret: string, o: { bind?: string; port?: number } = {}): string => `
import json, uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
SESSION = uuid.uuid4().hex
class H(BaseHTTPRequestHandler):
    def do_POST(self):
        msg = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if "id" not in msg:
            self.send_response(202); self.end_headers(); return
        if msg["method"] != "initialize" and self.headers.get("Mcp-Session-Id") != SESSION:
            self.send_response(404); self.end_headers(); return
        if msg["method"] == "initialize":
            result = {"protocolVersion": msg["params"]["protocolVersion"], "capabilities": {"tools": {}}, "serverInfo": {"name": "secrets", "version": "1"}}
        elif msg["method"] == "tools/list":
            result = {"tools": [{"name": "get_secret", "description": "Returns the secret.", "inputSchema": {"type": "object", "properties": {}}}]}
        elif msg["method"] == "tools/call" and msg["params"]["name"] == "get_secret":
            body = "event: message\\ndata: " + json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": {"content": [{"type": "text", "text": "${secret}"}]}}) + "\\n\\n"
            self.send_response(200); self.send_header("Content-Type", "text/event-stream"); self.send_header("Mcp-Session-Id", SESSION); self.end_headers()
            self.wfile.write(body.encode()); return
        else:
            result = None
        out = json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result} if result is not None else {"jsonrpc": "2.0", "id": msg["id"], "error": {"code": -32601, "message": "no such method"}}).encode()
        self.send_response(200); self.send_header("Content-Type", "application/json"); self.send_header("Mcp-Session-Id", SESSION)
        self.send_header("Content-Length", str(len(out))); self.end_headers(); self.wfile.write(out)
    def do_GET(self):
        self.send_response(200 if self.path == "/health" else 405); self.end_headers()
    def log_message(self, *a): pass
ThreadingHTTPServer(("${o.bind ?? '0.0.0.0'}", ${o.port ?? 8000}), H).serve_forever()
`;

// MCP's HTTP+SSE transport (2024-11-05), just enough of it: GET /sse opens a stream whose endpoint event names
// the server as `advertised` (its service name by default); POSTs answer 202 and the answers come on the stream. Before answering
// tools/call it pings the client and waits for the pong, so the client's answers to the server are exercised.
export const sseServer = (secret: string, o: { bind?: string; port?: number; advertised?: string } = {}): string => `
import json, queue, uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlparse, parse_qs
SESSIONS = {}
class H(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"
    def do_GET(self):
        path = urlparse(self.path).path
        if path == "/health":
            self.send_response(200); self.end_headers(); return
        if path != "/sse":
            self.send_response(404); self.end_headers(); return
        sid = uuid.uuid4().hex
        q = queue.Queue()
        SESSIONS[sid] = {"q": q, "init": False, "call": None}
        self.send_response(200); self.send_header("Content-Type", "text/event-stream"); self.send_header("Cache-Control", "no-cache"); self.end_headers()
        self.wfile.write(("event: endpoint\\r\\ndata: http://${o.advertised ?? 'mcp:8000'}/messages/?session_id=" + sid + "\\r\\n\\r\\n").encode()); self.wfile.flush()
        try:
            while True:
                try:
                    msg = q.get(timeout=2)
                except queue.Empty:
                    self.wfile.write(b": keep-alive\\n\\n"); self.wfile.flush(); continue
                self.wfile.write(("event: message\\ndata: " + json.dumps(msg) + "\\n\\n").encode()); self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass
        finally:
            SESSIONS.pop(sid, None)
    def do_POST(self):
        u = urlparse(self.path)
        s = SESSIONS.get(parse_qs(u.query).get("session_id", [""])[0])
        if u.path != "/messages/" or s is None:
            self.send_response(404); self.end_headers(); return
        msg = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.send_response(202); self.send_header("Content-Length", "8"); self.end_headers(); self.wfile.write(b"Accepted")
        q = s["q"]
        if "method" not in msg:
            if msg.get("id") == "ping-1" and s["call"] is not None:
                q.put({"jsonrpc": "2.0", "id": s["call"], "result": {"content": [{"type": "text", "text": "${secret}"}]}})
            return
        if "id" not in msg:
            if msg["method"] == "notifications/initialized": s["init"] = True
            return
        if msg["method"] == "initialize":
            q.put({"jsonrpc": "2.0", "id": msg["id"], "result": {"protocolVersion": "2024-11-05", "capabilities": {"tools": {}}, "serverInfo": {"name": "secrets", "version": "1"}}})
        elif not s["init"]:
            q.put({"jsonrpc": "2.0", "id": msg["id"], "error": {"code": -32002, "message": "not initialized"}})
        elif msg["method"] == "tools/list":
            q.put({"jsonrpc": "2.0", "id": msg["id"], "result": {"tools": [{"name": "get_secret", "description": "Returns the secret.", "inputSchema": {"type": "object", "properties": {}}}]}})
        elif msg["method"] == "tools/call" and msg["params"]["name"] == "get_secret":
            s["call"] = msg["id"]
            q.put({"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "looking"}})
            q.put({"jsonrpc": "2.0", "id": "ping-1", "method": "ping"})
        else:
            q.put({"jsonrpc": "2.0", "id": msg["id"], "error": {"code": -32601, "message": "no such method"}})
    def log_message(self, *a): pass
ThreadingHTTPServer(("${o.bind ?? '0.0.0.0'}", ${o.port ?? 8000}), H).serve_forever()
`;

/** The scripted model: calls `tool` first (when it is offered beside bash), writes its result to /app/answer.txt with bash, then stops. */
export const solveWithTool = (tool: string, args: Record<string, unknown>) => (n: number, req: RecordedRequest): Reply => {
  if (n === 0) {
    const names = ((req.body.tools ?? []) as { function: { name: string } }[]).map((t) => t.function.name);
    if (!names.includes(tool) || !names.includes('bash')) return finalMessage(`tools offered: ${names.join(',')}`);
    return { body: { id: 'c0', object: 'chat.completion', created: 1, model: 'scripted-model', choices: [{ index: 0, message: { role: 'assistant', content: null, tool_calls: [{ id: 'call_mcp', type: 'function', function: { name: tool, arguments: JSON.stringify(args) } }] }, finish_reason: 'tool_calls' }], usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 } } };
  }
  if (n === 1) {
    const result = String(req.body.messages[req.body.messages.length - 1]!.content);
    return bashCall('call_write', `printf %s '${result.replace(/'/g, '')}' > /app/answer.txt`);
  }
  return finalMessage('wrote the secret');
};
