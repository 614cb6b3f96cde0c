// MCP's stdio transport: the server is a process in the agent's sandbox (where the spec and Harbor run stdio
// servers: beside the agent), and JSON-RPC messages are lines of JSON on its stdin and stdout. Its stderr is
// kept (the last bytes) to say why a server that exits early did.
import type { StdinProcess } from '../../sandbox/index.ts';
import { McpError, PendingRequests, type McpConnection, type RpcMessage } from './mcp-rpc.ts';

export const STDIO_VERSION = '2025-03-26';
const STDERR_TAIL = 2000;
/** How long a closed connection waits for the server to exit after its stdin ended, before dropping it. */
const EXIT_GRACE_MS = 2000;

/** Splits text into lines as it arrives; returns the complete ones. */
export class LineSplitter {
  private partial = '';

  push(text: string): string[] {
    const lines = (this.partial + text).split('\n');
    this.partial = lines.pop() ?? '';
    return lines.map((l) => (l.endsWith('\r') ? l.slice(0, -1) : l)).filter((l) => l.trim() !== '');
  }
}

export class StdioConnection implements McpConnection {
  private readonly pending = new PendingRequests();
  private stderr = '';

  constructor(private readonly proc: StdinProcess, private readonly what: string) {
    const lines = new LineSplitter();
    proc.stdout.setEncoding('utf8');
    proc.stdout.on('data', (text: string) => {
      for (const line of lines.push(text)) {
        let msg: RpcMessage;
        try {
          msg = JSON.parse(line) as RpcMessage;
        } catch {
          continue; // not a message (the spec forbids it; some servers print a banner anyway)
        }
        this.pending.receive(msg, (answer) => this.write(answer));
      }
    });
    proc.stderr.setEncoding('utf8');
    proc.stderr.on('data', (text: string) => { this.stderr = (this.stderr + text).slice(-STDERR_TAIL); });
    void proc.exited.then((code) => {
      const said = this.stderr.trim();
      this.pending.end(new McpError(`${this.what} exited${code === null ? '' : ` with code ${code}`}${said ? `; its stderr ends: ${said}` : ' and wrote nothing to stderr'}`));
    });
  }

  private write(msg: RpcMessage): void {
    this.proc.stdin.write(`${JSON.stringify(msg)}\n`);
  }

  request(method: string, params: Record<string, unknown>, signal?: AbortSignal, timeoutMs?: number): Promise<Record<string, unknown>> {
    return this.pending.call(method, params, async (msg) => this.write(msg), signal, timeoutMs);
  }

  async notify(method: string): Promise<void> {
    this.write({ jsonrpc: '2.0', method });
  }

  /** The spec's shutdown: end its stdin and let it exit; one that lingers is dropped (its own timeout ends it). */
  async close(): Promise<void> {
    this.proc.stdin.end();
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.proc.exited, new Promise((r) => { timer = setTimeout(r, EXIT_GRACE_MS); })]);
    clearTimeout(timer);
    this.proc.detach();
  }
}
