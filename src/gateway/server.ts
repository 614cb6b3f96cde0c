// The model gateway a worker runs for its sandboxes: Anthropic-, OpenAI- and Gemini-compatible endpoints that check a
// per-episode token, put the real key in its place, forward to the configured upstream, pass streamed answers
// through chunk by chunk, and record each call's model, latency, tokens and cost.
import { randomBytes } from 'node:crypto';
import { createServer, request as httpRequest, Agent as HttpAgent, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { request as httpsRequest, Agent as HttpsAgent } from 'node:https';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { MODEL_RETRY, parseRetryAfter, retriesAfter, retryDelayMs, type ModelRetryPolicy } from '../outcomes/index.ts';
import { notLocalMessage } from './address.ts';
import { costOf, priceOf } from './prices.ts';
import { Scope, type ScopeOptions } from './scopes.ts';
import { SseTap } from './sse.ts';
import { trainingCall, type PolicySend, type TrainingScope } from './training.ts';
import type { Provider, Upstream } from './upstreams.ts';
import { StreamUsage, usageOfBody, NO_USAGE, type Protocol } from './usage.ts';


/** How providers word a request that no longer fits the context window. */
const CONTEXT_TEXT = /context[_ ]length|context window|maximum context|prompt is too long|input is too long|too many (input )?tokens/i;
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'proxy-connection', 'upgrade', 'te', 'trailer']);
const NOT_FORWARDED = new Set([...HOP_BY_HOP, 'host', 'content-length', 'authorization', 'x-api-key', 'x-goog-api-key', 'accept-encoding', 'proxy-authorization']);
/** Gemini's generateContent and streamGenerateContent, under /v1beta or /v1; the model is in the path. */
const GEMINI_CALL = /^\/v1(?:beta)?\/models\/([^/:]+):(generateContent|streamGenerateContent)$/;

interface Route {
  provider: Provider;
  protocol: Protocol | null;
  /** Where the model is named when not in the body (Gemini). */
  model?: string;
}

function routeOf(path: string, scope: Scope): Route | null {
  const gemini = GEMINI_CALL.exec(path);
  if (gemini) return { provider: 'google', protocol: 'gemini-generate', model: decodeURIComponent(gemini[1]!) };
  if (/^\/v1(beta)?\/models(\/|$)/.test(path) && scope.opts.upstreams.google) return { provider: 'google', protocol: null };
  if (path === '/v1/messages') return { provider: 'anthropic', protocol: 'anthropic-messages' };
  if (path.startsWith('/v1/messages/')) return { provider: 'anthropic', protocol: null };
  if (path === '/v1/chat/completions') return { provider: 'openai', protocol: 'openai-chat' };
  if (path === '/v1/responses') return { provider: 'openai', protocol: 'openai-responses' };
  if (!path.startsWith('/v1/')) return null;
  const provider: Provider = scope.opts.upstreams.openai ? 'openai' : 'anthropic';
  return { provider, protocol: null };
}

/** The token as each vendor's clients send a key: a bearer, x-api-key, Gemini's x-goog-api-key or its `?key=`. */
function tokenOf(headers: IncomingHttpHeaders, query: URLSearchParams): string | null {
  const auth = headers['authorization'];
  if (typeof auth === 'string' && /^bearer\s+/i.test(auth)) return auth.replace(/^bearer\s+/i, '').trim();
  for (const key of [headers['x-api-key'], headers['x-goog-api-key'], query.get('key')]) {
    if (typeof key === 'string' && key !== '') return key;
  }
  return null;
}

const GOOGLE_STATUS: Record<number, string> = { 400: 'INVALID_ARGUMENT', 401: 'UNAUTHENTICATED', 404: 'NOT_FOUND', 502: 'UNAVAILABLE' };

/** An error in the wire format the caller speaks, so its client shows the message. */
function sendError(res: ServerResponse, path: string, status: number, type: string, message: string): void {
  const body = path.startsWith('/v1/messages')
    ? { type: 'error', error: { type, message } }
    : /^\/v1(beta)?\/models\//.test(path)
      ? { error: { code: status, message, status: GOOGLE_STATUS[status] ?? 'UNKNOWN' } }
      : { error: { message, type, code: type } };
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

export interface GatewayOptions {
  /** An address of this machine: the engine's bridge gateway, so sandboxes reach it. */
  host: string;
  /** 0 picks a free port. */
  port?: number;
  /** The upstream retry policy (src/outcomes/model-retry.ts), shared with the openai harness; tests shorten it. */
  retry?: Partial<ModelRetryPolicy>;
}

const baseUrl = (host: string, port: number): string => `http://${host.includes(':') ? `[${host}]` : host}:${port}`;

export class ModelGateway {
  private server: Server | undefined;
  private readonly extra = new Map<string, { server: Server; port: number }>();
  private readonly scopes = new Map<string, Scope>();
  private readonly retry: ModelRetryPolicy;
  private readonly agents = { http: new HttpAgent({ keepAlive: true }), https: new HttpsAgent({ keepAlive: true }) };
  host = '';
  port = 0;

  constructor(private readonly opts: GatewayOptions) {
    this.retry = { ...MODEL_RETRY, ...opts.retry };
  }

  /** The base URL sandboxes use (no /v1). */
  get url(): string {
    return baseUrl(this.host, this.port);
  }

  async start(): Promise<void> {
    if (this.server) return;
    const { server, port } = await this.listen(this.opts.host, this.opts.port ?? 0);
    this.server = server;
    this.host = this.opts.host;
    this.port = port;
  }

  private async listen(host: string, port: number): Promise<{ server: Server; port: number }> {
    const server = createServer((req, res) => {
      this.handle(req, res).catch((err: unknown) => {
        if (!res.headersSent) sendError(res, req.url ?? '', 502, 'api_error', `berth gateway: ${(err as Error).message}`);
        else res.destroy();
      });
    });
    server.keepAliveTimeout = 65_000;
    await new Promise<void>((resolve, reject) => {
      server.once('error', (err: NodeJS.ErrnoException) => reject(err.code === 'EADDRNOTAVAIL' ? new Error(notLocalMessage(host)) : err));
      server.listen(port, host, () => resolve());
    });
    return { server, port: (server.address() as AddressInfo).port };
  }

  /**
   * The same gateway (same tokens) also served on `host`, another address of this machine that some sandboxes reach
   * instead (the egress network's gateway); `port` is tried first, then any. Returns the base URL there.
   */
  async alsoOn(host: string, port = 0): Promise<string> {
    let extra = this.extra.get(host);
    if (!extra) {
      extra = await this.listen(host, port).catch(() => this.listen(host, 0));
      this.extra.set(host, extra);
    }
    return baseUrl(host, extra.port);
  }

  async stop(): Promise<void> {
    const all = [this.server, ...[...this.extra.values()].map((e) => e.server)];
    this.server = undefined;
    this.extra.clear();
    this.agents.http.destroy();
    this.agents.https.destroy();
    await Promise.all(all.map((s) => (s ? new Promise<void>((resolve) => { s.closeAllConnections(); s.close(() => resolve()); }) : undefined)));
  }

  /** A fresh token for one scope (an agent turn); `token` reuses a known one (a re-attached turn). */
  register(opts: ScopeOptions, token = `berth-${randomBytes(24).toString('base64url')}`): Scope {
    const scope = new Scope(token, opts);
    this.scopes.set(token, scope);
    return scope;
  }

  revoke(token: string): void {
    this.scopes.delete(token);
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const started = performance.now();
    const url = new URL(req.url ?? '/', 'http://gateway');
    const path = url.pathname.replace(/\/+$/, '');
    const token = tokenOf(req.headers, url.searchParams);
    const scope = token ? this.scopes.get(token) : undefined;
    if (!scope) {
      req.resume();
      return sendError(res, path, 401, 'authentication_error', 'berth gateway: this token is not valid (it works only while its episode runs)');
    }
    const route = routeOf(path, scope);
    if (scope.opts.training && route?.protocol) return this.trainingCall(scope, scope.opts.training, route.protocol, path, url, req, res);
    const upstream = route ? scope.opts.upstreams[route.provider] : undefined;
    if (!route || !upstream) {
      req.resume();
      return sendError(res, path, 404, 'not_found_error', `berth gateway: no upstream for ${req.method} ${path} in this episode`);
    }
    if (scope.stopped) {
      req.resume();
      return sendError(res, path, 400, 'invalid_request_error', `berth gateway: ${scope.stopped.reason}; no further model calls in this episode`);
    }
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    let body = Buffer.concat(chunks);
    let parsed: Record<string, unknown> | null = null;
    if (route.protocol && body.length > 0) {
      try {
        parsed = JSON.parse(body.toString('utf8')) as Record<string, unknown>;
      } catch {
        parsed = null;
      }
    }
    const stream = parsed?.['stream'] === true;
    if (route.protocol === 'openai-chat' && parsed && stream && parsed['stream_options'] === undefined) {
      // Without it a streamed chat completion reports no usage.
      parsed['stream_options'] = { include_usage: true };
      body = Buffer.from(JSON.stringify(parsed));
    }
    const model = route.model ?? (typeof parsed?.['model'] === 'string' ? parsed['model'] : null);
    const headers = this.upstreamHeaders(req.headers, upstream, body.length);
    // The token may have come as Gemini's ?key=: the upstream gets the real key in a header instead.
    url.searchParams.delete('key');
    const target = new URL(`${upstream.baseUrl}${path}${url.search}`);

    const { up, attempts } = await this.sendWithRetries(target, req.method ?? 'POST', headers, body);
    const status = up.statusCode ?? 502;
    const outHeaders: Record<string, string | string[]> = {};
    for (const [k, v] of Object.entries(up.headers)) if (v !== undefined && !HOP_BY_HOP.has(k)) outHeaders[k] = v;
    res.writeHead(status, outHeaders);
    const isSse = String(up.headers['content-type'] ?? '').includes('text/event-stream');
    const tracker = route.protocol && isSse ? new StreamUsage(route.protocol) : null;
    const tap = tracker ? new SseTap((d) => tracker.event(d)) : null;
    const kept: Buffer[] = [];
    // A caller that went away (its own timeout) stops getting bytes, but the answer is read to its end: the
    // upstream charged for it, so its usage is recorded all the same.
    for await (const c of up) {
      const chunk = c as Buffer;
      if (tap) tap.push(chunk);
      else if (route.protocol) kept.push(chunk);
      if (res.destroyed || res.writableEnded) continue;
      if (!res.write(chunk)) await new Promise((r) => { res.once('drain', r); res.once('close', r); });
    }
    tap?.end();
    if (!res.destroyed) res.end();
    if (!route.protocol) return;
    let usage = tracker?.usage ?? null;
    if (!tracker) {
      const text = Buffer.concat(kept).toString('utf8');
      if (status >= 400 && CONTEXT_TEXT.test(text)) scope.contextOverflow = `the model's context window is full: HTTP ${status}: ${text.slice(0, 300)}`;
      try {
        usage = usageOfBody(route.protocol, JSON.parse(text));
      } catch {
        usage = null;
      }
    }
    const counted = usage ?? NO_USAGE;
    scope.record({
      at: new Date().toISOString(), protocol: route.protocol, model, status,
      latencyMs: Math.round((performance.now() - started) * 100) / 100, ...counted,
      costUsd: status < 400 && model ? costOf(priceOf(scope.opts.prices, route.provider, model), counted) : null,
      stream: isSse || path.endsWith(':streamGenerateContent'), attempts,
    });
  }

  private async trainingCall(scope: Scope, training: TrainingScope, protocol: Protocol, path: string, url: URL, req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (scope.stopped) {
      req.resume();
      return sendError(res, path, 400, 'invalid_request_error', `berth gateway: ${scope.stopped.reason}; no further model calls in this episode`);
    }
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const send: PolicySend = async (target, headers, body) => {
      const { up, attempts } = await this.sendWithRetries(target, 'POST', { ...headers, 'content-length': String(body.length) }, body);
      const parts: Buffer[] = [];
      for await (const c of up) parts.push(c as Buffer);
      return { status: up.statusCode ?? 502, text: Buffer.concat(parts).toString('utf8'), attempts };
    };
    const call = { dialect: protocol, path, body: Buffer.concat(chunks), pathStream: path.endsWith(':streamGenerateContent'), sse: url.searchParams.get('alt') === 'sse' };
    const used = await trainingCall(training, call, req, res, send, (status, type, message) => sendError(res, path, status, type, message), process.env, scope);
    if (used) scope.record({ ...used, costUsd: null });
  }

  /** Sends, retrying a refused connection and the statuses the retry policy names (rate limits, overload). */
  async sendWithRetries(target: URL, method: string, headers: Record<string, string>, body: Buffer): Promise<{ up: IncomingMessage; attempts: number }> {
    let attempts = 0;
    for (;;) {
      attempts++;
      let up: IncomingMessage;
      try {
        up = await this.send(target, method, headers, body);
      } catch (err) {
        // A refused or dropped connection before any answer: retried like a rate limit.
        if (!retriesAfter(attempts, null, this.retry)) throw new Error(`the upstream ${target.origin} did not answer: ${(err as Error).message}`);
        await sleep(retryDelayMs(attempts, null, this.retry));
        continue;
      }
      const status = up.statusCode ?? 502;
      if (!retriesAfter(attempts, status, this.retry)) return { up, attempts };
      up.resume();
      const told = up.headers['retry-after'];
      await sleep(retryDelayMs(attempts, parseRetryAfter(typeof told === 'string' ? told : null), this.retry));
    }
  }

  private upstreamHeaders(incoming: IncomingHttpHeaders, upstream: Upstream, length: number): Record<string, string> {
    const out: Record<string, string> = {};
    for (const [k, v] of Object.entries(incoming)) {
      if (v === undefined || NOT_FORWARDED.has(k)) continue;
      out[k] = Array.isArray(v) ? v.join(', ') : v;
    }
    if (upstream.apiKey) {
      if (upstream.provider === 'anthropic') out['x-api-key'] = upstream.apiKey;
      else if (upstream.provider === 'google') out['x-goog-api-key'] = upstream.apiKey;
      else out['authorization'] = `Bearer ${upstream.apiKey}`;
    }
    out['content-length'] = String(length);
    return out;
  }

  private send(target: URL, method: string, headers: Record<string, string>, body: Buffer): Promise<IncomingMessage> {
    const https = target.protocol === 'https:';
    const make = https ? httpsRequest : httpRequest;
    return new Promise((resolve, reject) => {
      const r = make(target, { method, headers, agent: https ? this.agents.https : this.agents.http }, resolve);
      r.on('error', reject);
      r.end(body);
    });
  }
}
