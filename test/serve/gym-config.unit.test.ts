// What berth serve answers NeMo Gym's rollout collection as its head server (GET /global_config_dict_yaml): itself as
// the harbor agent and as the legacy_agent environment server fronting it (NeMo Gym 0.7.0 posts an agent's rows to
// /run of the environment server that names it: nemo_gym/rollout_collection.py, _environment_servers_by_agent).
import { describe, expect, it } from 'vitest';
import { GYM_AGENT_NAME, GYM_ENVIRONMENT_NAME, gymGlobalConfig, gymGlobalConfigBody, reachedAt } from '../../src/serve/gym-config.ts';

describe('the head server config berth serve answers NeMo Gym', () => {
  it('names berth serve as head server, harbor agent and the environment server fronting that agent', () => {
    const config = gymGlobalConfig('10.0.0.5', 8642);
    expect(config).toEqual({
      head_server: { host: '10.0.0.5', port: 8642 },
      [GYM_AGENT_NAME]: { responses_api_agents: { harbor_agent_general: { entrypoint: 'app.py', host: '10.0.0.5', port: 8642 } } },
      [GYM_ENVIRONMENT_NAME]: {
        environment_servers: { legacy_agent: { entrypoint: 'app.py', host: '10.0.0.5', port: 8642, agent_server: { type: 'responses_api_agents', name: GYM_AGENT_NAME } } },
      },
    });
    // NeMo Gym json-decodes the body to a text it parses as YAML: a JSON string holding the config as JSON text.
    expect(JSON.parse(JSON.parse(JSON.stringify(gymGlobalConfigBody(config))) as string)).toEqual(config);
  });

  it.each([
    ['127.0.0.1:8642', { host: '127.0.0.1', port: 8642 }],
    ['[::1]:9000', { host: '::1', port: 9000 }],
    ['serve.internal', { host: 'serve.internal', port: 80 }],
    [undefined, { host: '0.0.0.0', port: 1 }],
    ['bad host:x', { host: '0.0.0.0', port: 1 }],
  ])('where the client reached us: %s', (header, expected) => {
    expect(reachedAt(header, { host: '0.0.0.0', port: 1 })).toEqual(expected);
  });
});
