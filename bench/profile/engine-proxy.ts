// A counting pass-through in front of the Docker engine's socket: every request line is recorded with its
// time, and bytes flow unchanged both ways (hijacked exec and attach streams included).
import { createConnection, createServer, type Server } from 'node:net';
import { rmSync } from 'node:fs';
import { callKind } from './attribution.ts';

const REQUEST_LINE = /(GET|POST|PUT|DELETE|HEAD) (\/\S*) HTTP\/1\.[01]\r\n/g;

export interface EngineProxy { socket: string; calls: Array<{ at: number; kind: string }>; close(): Promise<void> }

export async function startEngineProxy(upstream: string, socket: string): Promise<EngineProxy> {
  rmSync(socket, { force: true });
  const calls: EngineProxy['calls'] = [];
  const server: Server = createServer((client) => {
    const engine = createConnection(upstream);
    let upgraded = false;
    client.on('data', (chunk: Buffer) => {
      // After an upgrade (exec start, attach) the client's bytes are a process's stdin, not requests.
      if (!upgraded) {
        const text = chunk.toString('latin1');
        for (const m of text.matchAll(REQUEST_LINE)) calls.push({ at: Date.now(), kind: callKind(m[1]!, m[2]!) });
        if (/\r\nUpgrade: tcp\r\n/i.test(text)) upgraded = true;
      }
      engine.write(chunk);
    });
    engine.on('data', (chunk) => client.write(chunk));
    client.on('end', () => engine.end());
    engine.on('end', () => client.end());
    client.on('error', () => engine.destroy());
    engine.on('error', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(socket, resolve));
  return { socket, calls, close: () => new Promise((resolve) => server.close(() => resolve())) };
}
