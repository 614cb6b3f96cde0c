// What NeMo Gym's rollout collection asks a head server for (`GET /global_config_dict_yaml`, read by
// nemo_gym/server_utils.py ServerClient.load_from_global_config): the servers it can post to. berth serve answers as
// its own head server, naming itself as the harbor agent and as the environment server that fronts it (NeMo Gym 0.7
// routes an agent's rows to `/run` of its environment server; `legacy_agent` relays `/run` as is). So
// `ng_collect_rollouts +head_server.host=H +head_server.port=P +agent_name=berth_harbor_agent ...` collects from it.

export const GYM_AGENT_NAME = 'berth_harbor_agent';
export const GYM_ENVIRONMENT_NAME = 'berth_harbor_environment';

/** The global config dict, for a client that reached berth serve at `host`:`port`. */
export function gymGlobalConfig(host: string, port: number): Record<string, unknown> {
  const at = { host, port };
  return {
    head_server: at,
    [GYM_AGENT_NAME]: { responses_api_agents: { harbor_agent_general: { entrypoint: 'app.py', ...at } } },
    [GYM_ENVIRONMENT_NAME]: {
      environment_servers: { legacy_agent: { entrypoint: 'app.py', ...at, agent_server: { type: 'responses_api_agents', name: GYM_AGENT_NAME } } },
    },
  };
}

/** Host and port from a request's Host header (how the client reached us), else the listening address. */
export function reachedAt(hostHeader: string | undefined, fallback: { host: string; port: number }): { host: string; port: number } {
  const m = /^(\[[^\]]+\]|[^:]+)(?::(\d+))?$/.exec(hostHeader ?? '');
  if (!m) return fallback;
  return { host: m[1]!.replace(/^\[|\]$/g, ''), port: m[2] ? Number(m[2]) : 80 };
}

/**
 * The body NeMo Gym's client reads: it json-decodes the answer (FastAPI sends the head server's YAML text as a JSON
 * string), then parses that text with OmegaConf (YAML, of which JSON is a part).
 */
export const gymGlobalConfigBody = (config: Record<string, unknown>): string => JSON.stringify(config);
