// client-node makes a new https.Agent for every API request, so each call opens a TLS connection of its own: a full
// handshake with the client certificate, about 6 ms of this process's CPU and 8-14 ms per call on the local cluster,
// and as much again in the apiserver. This KubeConfig gives the API calls one keep-alive agent per set of TLS
// options instead (rebuilt when they change: a rotated certificate), and exec and watch streams, which take their
// connection for themselves, one agent of their own whose TLS sessions are resumed (no certificate exchange) and one TLS
// context, so the certificate and key are not parsed again for each stream.
import { KubeConfig, type RequestContext } from '@kubernetes/client-node';
import https from 'node:https';
import tls from 'node:tls';

/** The options that make two agents' connections interchangeable. */
export function tlsOptionsKey(o: https.AgentOptions): string {
  const text = (v: unknown): string => (v === undefined ? '' : Buffer.isBuffer(v) ? v.toString('base64') : Array.isArray(v) ? v.map(text).join(',') : String(v));
  return [o.ca, o.cert, o.key, o.pfx, o.passphrase, o.rejectUnauthorized, o.servername].map(text).join('|');
}

/** What a TLS context is made of among an agent's options (the rest are per connection). */
export function secureContextOptions(o: https.AgentOptions): tls.SecureContextOptions {
  return { ca: o.ca, cert: o.cert, key: o.key, pfx: o.pfx, passphrase: o.passphrase };
}

export class PooledKubeConfig extends KubeConfig {
  private pooled: { key: string; agent: https.Agent } | undefined;
  private streams: { key: string; agent: https.Agent; context: tls.SecureContext } | undefined;

  override async applyToHTTPSOptions(opts: Parameters<KubeConfig['applyToHTTPSOptions']>[0]): Promise<void> {
    await super.applyToHTTPSOptions(opts);
    const fresh = opts.agent;
    if (!(fresh instanceof https.Agent) || fresh.constructor !== https.Agent) return;
    const key = tlsOptionsKey(fresh.options);
    if (this.streams?.key !== key) this.streams = { key, agent: new https.Agent(fresh.options), context: tls.createSecureContext(secureContextOptions(fresh.options)) };
    opts.agent = this.streams.agent;
    // Each stream is a new TLS connection; without a context given, tls.connect parses the CA, certificate and key
    // again for each (about 6 ms of this process's CPU per exec on the local cluster).
    (opts as tls.ConnectionOptions).secureContext = this.streams.context;
  }

  override async applySecurityAuthentication(context: RequestContext): Promise<void> {
    await super.applySecurityAuthentication(context);
    const fresh = context.getAgent();
    // A proxy's agent, or plain HTTP: as client-node made it.
    if (!(fresh instanceof https.Agent) || fresh.constructor !== https.Agent) return;
    const key = tlsOptionsKey(fresh.options);
    if (this.pooled?.key !== key) this.pooled = { key, agent: new https.Agent({ ...fresh.options, keepAlive: true }) };
    context.setAgent(this.pooled.agent);
  }

  /** The agent exec and watch streams share now (none before the first). */
  get streamAgent(): https.Agent | undefined {
    return this.streams?.agent;
  }

  /** The agent API calls share now (none before the first call). */
  get agent(): https.Agent | undefined {
    return this.pooled?.agent;
  }
}
