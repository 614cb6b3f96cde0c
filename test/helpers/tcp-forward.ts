// A TCP forwarder in the test process: listens on an address the cluster's pods reach (the local node's) and passes
// each connection to a service this machine serves on loopback or a unix socket (the Temporal dev server, the Docker
// engine, the registry), as a real deployment reaches them under their own names. With `holdAfter`, it stops reading
// from its clients once they have sent that many bytes in all: an upload through it stays under way, for as long as
// the test needs, instead of racing the test's poll.
import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';

export interface Forward {
  /** host:port the pods dial. */
  readonly address: string;
  /** The address each connection came from, in order. */
  readonly clients: string[];
  /** Whether `holdAfter` was reached: no client's bytes go on from then. */
  readonly held: boolean;
  close(): Promise<void>;
}

export type ForwardTarget = { host: string; port: number } | { path: string };

export async function forwardTcp(listenHost: string, target: ForwardTarget, opts: { holdAfter?: number } = {}): Promise<Forward> {
  const open = new Set<Socket>();
  const inbounds = new Set<Socket>();
  const clients: string[] = [];
  let bytesIn = 0;
  let held = false;
  const hold = () => { held = true; for (const s of inbounds) s.pause(); };
  const server: Server = createServer((inbound) => {
    clients.push(inbound.remoteAddress ?? '');
    const outbound = 'path' in target ? connect(target.path) : connect(target.port, target.host);
    for (const s of [inbound, outbound]) {
      open.add(s);
      s.on('close', () => open.delete(s));
    }
    inbounds.add(inbound);
    inbound.on('close', () => inbounds.delete(inbound));
    inbound.on('error', () => outbound.destroy());
    outbound.on('error', () => inbound.destroy());
    inbound.on('end', () => outbound.end());
    inbound.on('data', (chunk: Buffer) => {
      bytesIn += chunk.length;
      if (!outbound.write(chunk) && !held) {
        inbound.pause();
        outbound.once('drain', () => { if (!held) inbound.resume(); });
      }
      if (opts.holdAfter !== undefined && bytesIn >= opts.holdAfter) hold();
    });
    if (held) inbound.pause();
    outbound.pipe(inbound);
  });
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(0, listenHost, resolve));
  return {
    address: `${listenHost}:${(server.address() as AddressInfo).port}`,
    clients,
    get held() { return held; },
    close: () => new Promise<void>((resolve) => {
      for (const s of open) s.destroy();
      server.close(() => resolve());
    }),
  };
}
