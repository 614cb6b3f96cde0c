// The model gateway a worker runs for its sandboxes: Anthropic-, OpenAI- and Gemini-compatible endpoints that check a
// per-episode token, put the real key in its place, forward to the configured upstream, pass streamed answers
// through chunk by chunk, and record each call's model, latency, tokens and cost.
import { randomBytes } from 'node:crypto';
import { createServer, request as httpRequest, Agent as HttpAgent, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { request as httpsRequest, Agent as HttpsAgent } from 'node:https';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { isTransientModelStatus } from '../outcomes/index.ts';
import { notLocalMessage } from './address.ts';
import { costOf, priceOf } from './prices.ts';
import { Scope, type ScopeOptions } from './scopes.ts';
import { SseTap } from './sse.ts';
import type { Provider, Upstream } from './upstreams.ts';
import { StreamUsage, usageOfBody, NO_USAGE, type Protocol } from './usage.ts';

export interface RetryPolicy {
  /** Upstream attempts for one call when it answers 429, 503 or 529 (default 5). */
  maxAttempts: number;
  /** First wait; doubles each time, at most maxWaitMs. Retry-After wins when it is shorter than maxWaitMs. */
  baseMs: number;
  maxWaitMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = { maxAttempts: 5, baseMs: 1000, maxWaitMs: 30_000 };

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

function retryAfterMs(headers: IncomingHttpHeaders): number | null {
  const v = headers['retry-after'];
  if (typeof v !== 'string') return null;
  const sec = Number(v);
  if (Number.isFinite(sec) && sec >= 0) return sec * 1000;
  const at = Date.parse(v);
  return Number.isFinite(at) ? Math.max(0, at - Date.now()) : null;
}

export interface GatewayOptions {
  /** An address of this machine: the engine's bridge gateway, so sandboxes reach it. */
  host: string;
  /** 0 picks a free port. */
  port?: number;
  retry?: Partial<RetryPolicy>;
}

export class ModelGateway {
  private server: Server | undefined;
  private readonly scopes = new Map<string, Scope>();
  private readonly retry: RetryPolicy;
  private readonly agents = { http: new HttpAgent({ keepAlive: true }), https: new HttpsAgent({ keepAlive: true }) };
  host = '';
  port = 0;

  constructor(private readonly opts: GatewayOptions) {
    this.retry = { ...DEFAULT_RETRY, ...opts.retry };
  }

  /** The base URL sandboxes use (no /v1). */
  get url(): string {
    return `http://${this.host.includes(':') ? `[${this.host}]` : this.host}:${this.port}`;
  }

  async start(): Promise<void> {
    if (this.server) return;
    const server = createServer((req, res) => {
      this.handle(req, res).catch((err: unknown) => {
        if (!res.headersSent) sendError(res, req.url ?? '', 502, 'api_error', `berth gateway: ${(err as Error).message}`);
        else res.destroy();
      });
    });
    server.keepAliveTimeout = 65_000;
    await new Promise<void>((resolve, reject) => {
      server.once('error', (err: NodeJS.ErrnoException) => reject(err.code === 'EADDRNOTAVAIL' ? new Error(notLocalMessage(this.opts.host)) : err));
      server.listen(this.opts.port ?? 0, this.opts.host, () => resolve());
    });
    this.server = server;
    this.host = this.opts.host;
    this.port = (server.address() as AddressInfo).port;
  }

  async stop(): Promise<void> {
    const s = this.server;
    this.server = undefined;
    this.agents.http.destroy();
    this.agents.https.destroy();
    if (s) await new Promise<void>((resolve) => { s.closeAllConnections(); s.close(() => resolve()); });
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

    let attempts = 0;
    let up: IncomingMessage | undefined;
    for (;;) {
      attempts++;
      try {
        up = await this.send(target, req.method ?? 'POST', headers, body);
      } catch (err) {
        // A refused or dropped connection before any answer: retried like a rate limit.
        if (attempts >= this.retry.maxAttempts) throw new Error(`the upstream ${target.origin} did not answer: ${(err as Error).message}`);
        await sleep(Math.min(this.retry.maxWaitMs, this.retry.baseMs * 2 ** (attempts - 1)));
        continue;
      }
      const status = up.statusCode ?? 502;
      if (!isTransientModelStatus(status) || attempts >= this.retry.maxAttempts) break;
      up.resume();
      const backoff = Math.min(this.retry.maxWaitMs, this.retry.baseMs * 2 ** (attempts - 1));
      const told = retryAfterMs(up.headers);
      await sleep(told !== null && told <= this.retry.maxWaitMs ? told : backoff);
    }

    if (!up) throw new Error('no upstream answer');
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
