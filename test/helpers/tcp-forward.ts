// A TCP forwarder in the test process: listens on an address the cluster's pods reach (the local node's) and passes
// each connection to a service this machine serves on loopback or a unix socket (the Temporal dev server, the Docker
// engine, the registry), as a real deployment reaches them under their own names.
import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';

export interface Forward {
  /** host:port the pods dial. */
  readonly address: string;
  /** The address each connection came from, in order. */
  readonly clients: string[];
  close(): Promise<void>;
}

export type ForwardTarget = { host: string; port: number } | { path: string };

export async function forwardTcp(listenHost: string, target: ForwardTarget): Promise<Forward> {
  const open = new Set<Socket>();
  const clients: string[] = [];
  const server: Server = createServer((inbound) => {
    clients.push(inbound.remoteAddress ?? '');
    const outbound = 'path' in target ? connect(target.path) : connect(target.port, target.host);
    for (const s of [inbound, outbound]) {
      open.add(s);
      s.on('close', () => open.delete(s));
    }
    inbound.on('error', () => outbound.destroy());
    outbound.on('error', () => inbound.destroy());
    inbound.pipe(outbound).pipe(inbound);
  });
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(0, listenHost, resolve));
  return {
    address: `${listenHost}:${(server.address() as AddressInfo).port}`,
    clients,
    close: () => new Promise<void>((resolve) => {
      for (const s of open) s.destroy();
      server.close(() => resolve());
    }),
  };
}
