// Where Temporal is (TEMPORAL_ADDRESS, or the embedded dev server's BERTH_TEMPORAL_PORT, BERTH_UI_PORT,
// TEMPORAL_NAMESPACE, BERTH_UI_URL) and how long it keeps histories: read here for the CLI, client and server. The
// search attributes it registers are in search-attributes.ts.

/** Where the embedded dev server listens and what it registers. */
export interface ServerSettings {
  host: string;
  port: number;
  uiPort: number;
  namespace: string;
}

export function serverSettings(): ServerSettings {
  return {
    host: '127.0.0.1',
    port: Number(process.env.BERTH_TEMPORAL_PORT ?? 7233),
    uiPort: Number(process.env.BERTH_UI_PORT ?? 8233),
    namespace: process.env.TEMPORAL_NAMESPACE ?? 'default',
  };
}

export const RETENTION_DAYS = 30;

export function temporalAddress(): { address: string; embedded: boolean } {
  const fromEnv = process.env.TEMPORAL_ADDRESS;
  if (fromEnv) return { address: fromEnv, embedded: false };
  const s = serverSettings();
  return { address: `${s.host}:${s.port}`, embedded: true };
}

export function uiUrl(): string {
  return process.env.BERTH_UI_URL ?? `http://localhost:${serverSettings().uiPort}`;
}

export function batchUiLink(batchId: string): string {
  const ns = serverSettings().namespace;
  const query = encodeURIComponent(`BerthBatch="${batchId}"`);
  return `${uiUrl()}/namespaces/${ns}/workflows?query=${query}`;
}

/** One workflow run's page in the Temporal UI (an episode, a regrade). */
export function workflowUiLink(workflowId: string, runId: string): string {
  return `${uiUrl()}/namespaces/${serverSettings().namespace}/workflows/${encodeURIComponent(workflowId)}/${encodeURIComponent(runId)}/history`;
}
