// The MCP stdio server the tests run inside a sandbox (Task Folder Format § [environment] mcp_servers): Python, one
// JSON-RPC message per line, one tool `lookup` answering `answer`; with `log`, each request's method and tool name is
// appended there as a JSON line.
export function mcpStdioServer(answer: string, log?: string): string {
  const logLines = log
    ? `    with open("${log}", "a") as log:
        log.write(json.dumps({"method": m, "name": (msg.get("params") or {}).get("name")}) + "\\n")
`
    : '';
  return `import json, sys
for line in sys.stdin:
    try:
        msg = json.loads(line)
    except ValueError:
        continue
    if "id" not in msg:
        continue
    m = msg.get("method")
${logLines}    if m == "initialize":
        out = {"result": {"protocolVersion": msg["params"].get("protocolVersion", "2025-06-18"), "capabilities": {"tools": {}}, "serverInfo": {"name": "vault", "version": "1"}}}
    elif m == "tools/list":
        out = {"result": {"tools": [{"name": "lookup", "description": "Looks the answer up.", "inputSchema": {"type": "object", "properties": {}}}]}}
    elif m == "tools/call":
        out = {"result": {"content": [{"type": "text", "text": "${answer}"}]}}
    elif m == "ping":
        out = {"result": {}}
    else:
        out = {"error": {"code": -32601, "message": "no such method"}}
    print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], **out}), flush=True)
`;
}
