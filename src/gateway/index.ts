// The model gateway (docs/design.md section 5): keys stay on the worker, sandboxes get a per-episode token.
export { ModelGateway, type GatewayOptions } from './server.ts';
export { Scope, type CallRecord, type LimitKind, type ScopeLimits, type ScopeOptions } from './scopes.ts';
export { upstreamFor, splitModel, normaliseBase, keyVariableOf, PROVIDERS, type Provider, type Upstream } from './upstreams.ts';
export { costOf, priceOf, type Price, type PriceTable } from './prices.ts';
export { usageOfBody, StreamUsage, addUsage, NO_USAGE, type CallUsage, type Protocol } from './usage.ts';
export { SseTap } from './sse.ts';
export { gatewayHost, firstAddress, notLocalMessage } from './address.ts';
export { probeModel, classifyProbe, type ProbeResult } from './probe.ts';
export { probePolicyEndpoint } from './policy-probe.ts';
export { type TrainingScope } from './training.ts';
