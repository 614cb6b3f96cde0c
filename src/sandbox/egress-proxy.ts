// The egress proxy of one host (docs/design.md section 7, Network): an HTTP CONNECT and forward proxy that a worker serves
// on the gateway address of the host's internal egress network, where allowlist sandboxes live with no other route
// out. Each sandbox's allowlist for the phase it is in is a small file named after its address on that network
// (written by the phase that is about to run), so any worker of the host, and a worker restarted after a crash,
// serves the same decisions. A file also names its container, which the proxy checks, so an address reused by a
// newer sandbox never inherits an older one's allowlist.
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { admit, compileAllowlist } from './egress-allow.ts';

export interface EgressPolicy {
  /** The container whose address this is. */
  container: string;
  /** The admitted destinations; null admits everything (a public phase of a sandbox that also has allowlist phases). */
  hosts: string[] | null;
}

/** One file per sandbox address under `dir`, replaced by rename so a reader never sees half of one. */
export class EgressPolicies {
  constructor(readonly dir: string) {}

  private file(ip: string): string {
    return join(this.dir, `${ip.replace(/[^0-9A-Fa-f.:]/g, '_')}.json`);
  }

  set(ip: string, policy: EgressPolicy): void {
    mkdirSync(this.dir, { recursive: true });
    const tmp = `${this.file(ip)}.${process.pid}.tmp`;
    writeFileSync(tmp, JSON.stringify(policy));
    renameSync(tmp, this.file(ip));
  }

  remove(ip: string): void {
    rmSync(this.file(ip), { force: true });
  }

  get(ip: string): EgressPolicy | null {
    try {
      return JSON.parse(readFileSync(this.file(ip), 'utf8')) as EgressPolicy;
    } catch {
      return null;
    }
  }
}

export interface EgressProxyOptions {
  /** The address to listen on: the egress network's gateway, which its sandboxes reach. */
  host: string;
  /** Holds the port, so a restarted worker (or another worker of this host) serves where sandboxes were told. */
  portFile: string;
  policies: EgressPolicies;
  /** Whether `container` has address `ip` on the egress network now. */
  owns(ip: string, container: string): Promise<boolean>;
  /** How often a worker that found the port taken tries to take it over (the one serving it may die). */
  retryMs?: number;
}

const peerAddress = (s: Socket): string => (s.remoteAddress ?? '').replace(/^::ffff:/, '');

function splitHostPort(target: string, defaultPort: number): { host: string; port: number } | null {
  const m = /^(\[[^\]]+\]|[^:]+)(?::(\d+))?$/.exec(target);
  if (!m) return null;
  return { host: m[1]!, port: m[2] ? Number(m[2]) : defaultPort };
}

export class EgressProxy {
  private server: Server | null = null;
  private port: number | null = null;
  private retry: NodeJS.Timeout | null = null;
  private readonly verified = new Map<string, number>();
  /** Tunnels leave the HTTP server's books once upgraded: closed here on close. */
  private readonly tunnels = new Set<Socket>();

  constructor(private readonly opts: EgressProxyOptions) {}

  /** The proxy URL sandboxes are given; serves it from this process when the port is free. */
  async start(): Promise<string> {
    if (this.port === null) this.port = await this.bindOrJoin();
    return `http://${this.opts.host}:${this.port}`;
  }

  get serving(): boolean {
    return this.server !== null;
  }

  async close(): Promise<void> {
    if (this.retry) clearInterval(this.retry);
    this.retry = null;
    const s = this.server;
    this.server = null;
    if (!s) return;
    const closed = new Promise<void>((r) => s.close(() => r()));
    s.closeAllConnections();
    for (const t of this.tunnels) t.destroy();
    await closed;
  }

  private readPort(): number | null {
    try {
      const n = Number(readFileSync(this.opts.portFile, 'utf8').trim());
      return Number.isInteger(n) && n > 0 ? n : null;
    } catch {
      return null;
    }
  }

  private listen(port: number): Promise<Server | null> {
    const server = createServer((req, res) => void this.forward(req, res));
    server.on('connect', (req: IncomingMessage, socket: Socket, head: Buffer) => void this.tunnel(req, socket, head));
    server.on('clientError', (_err, socket) => socket.destroy());
    return new Promise((resolve, reject) => {
      server.once('error', (err: NodeJS.ErrnoException) => (err.code === 'EADDRINUSE' ? resolve(null) : reject(err)));
      // A side service of the worker: it never keeps a worker that is shutting down alive.
      server.listen(port, this.opts.host, () => resolve(server.unref()));
    });
  }

  private async bindOrJoin(): Promise<number> {
    const recorded = this.readPort();
    if (recorded !== null) {
      this.server = await this.listen(recorded);
      if (!this.server) this.takeOverLater(recorded);
      return recorded;
    }
    const server = (await this.listen(0))!;
    const port = (server.address() as { port: number }).port;
    mkdirSync(join(this.opts.portFile, '..'), { recursive: true });
    try {
      writeFileSync(this.opts.portFile, `${port}\n`, { flag: 'wx' });
      this.server = server;
      return port;
    } catch {
      // Another worker recorded its port first: serve that one (or take it over later).
      await new Promise<void>((r) => server.close(() => r()));
      return this.bindOrJoin();
    }
  }

  private takeOverLater(port: number): void {
    this.retry = setInterval(() => {
      void this.listen(port).then((s) => {
        if (!s || this.server) {
          s?.close();
          return;
        }
        this.server = s;
        if (this.retry) clearInterval(this.retry);
        this.retry = null;
      }, () => undefined);
    }, this.opts.retryMs ?? 2000);
    this.retry.unref();
  }

  /** The connect address for `host` requested by the sandbox at `ip`, or null when its phase does not admit it. */
  private async decide(ip: string, host: string): Promise<string | null> {
    const policy = this.opts.policies.get(ip);
    if (!policy) return null;
    const key = `${ip}\0${policy.container}`;
    if ((this.verified.get(key) ?? 0) < Date.now()) {
      if (!(await this.opts.owns(ip, policy.container).catch(() => false))) return null;
      this.verified.set(key, Date.now() + 10_000);
    }
    const bare = host.replace(/^\[(.*)\]$/, '$1');
    return policy.hosts === null ? bare : admit(compileAllowlist(policy.hosts), bare);
  }

  private async tunnel(req: IncomingMessage, client: Socket, head: Buffer): Promise<void> {
    client.on('error', () => undefined);
    this.tunnels.add(client);
    client.on('close', () => this.tunnels.delete(client));
    const target = splitHostPort(req.url ?? '', 443);
    const to = target ? await this.decide(peerAddress(client), target.host) : null;
    if (!target || to === null) {
      client.end(`HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\n\r\nberth egress: ${req.url} is not in this phase's allowed_hosts\n`);
      return;
    }
    let open = false;
    const upstream = connect({ host: to, port: target.port }, () => {
      open = true;
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length > 0) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    upstream.on('error', () => (open ? client.destroy() : client.end('HTTP/1.1 502 Bad Gateway\r\n\r\n')));
    client.on('close', () => upstream.destroy());
  }

  private async forward(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let url: URL;
    try {
      url = new URL(req.url ?? '');
    } catch {
      res.writeHead(400).end('berth egress: a proxy request needs an absolute URL\n');
      return;
    }
    const to = url.protocol === 'http:' ? await this.decide(peerAddress(req.socket), url.hostname) : null;
    if (to === null) {
      res.writeHead(403, { 'content-type': 'text/plain' }).end(`berth egress: ${url.host} is not in this phase's allowed_hosts\n`);
      return;
    }
    const headers = { ...req.headers };
    for (const h of Object.keys(headers)) if (h.startsWith('proxy-')) delete headers[h];
    const upstream = request({ host: to, port: Number(url.port || 80), method: req.method, path: `${url.pathname}${url.search}`, headers }, (up) => {
      res.writeHead(up.statusCode ?? 502, up.headers);
      up.pipe(res);
    });
    upstream.on('error', () => {
      if (!res.headersSent) res.writeHead(502);
      res.end();
    });
    req.pipe(upstream);
  }
}
