// cline's providers.json (docs/agents.md, cline): the file Berth writes in place of `cline auth`, so the anthropic
// provider gets the gateway's base URL too. The turn's shell writes it with the token spliced in from the environment;
// run here with the machine's bash, the file read back must be the JSON Berth meant, the token in it and never in the
// command line.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { clineProviders } from '../../src/agents/installed/cline.ts';
import { INSTALLED_AGENTS } from '../../src/agents/index.ts';
import type { AgentRun } from '../../src/agents/installed/types.ts';

// The gateway's tokens are `berth-` and base64url (src/gateway/server.ts), which JSON and the shell's double quotes
// take as they are: the splice relies on that alphabet.
const TOKEN = 'berth-Zx9_Qk-3mNp7Ld_0aB-cD';

const runFor = (provider: AgentRun['provider'], home: string): AgentRun => ({
  gatewayUrl: 'http://10.213.0.1:4100/g/ep1', token: TOKEN, model: provider === 'anthropic' ? 'claude-sonnet-4-5' : 'gpt-4.1-mini', provider,
  instructionFile: '/logs/agent/instruction.md', home, workdir: '/app', args: {}, mcpServers: [], skillsDir: null,
});

describe('cline providers.json', () => {
  it.each([
    { provider: 'openai' as const, id: 'openai-compatible' },
    { provider: 'anthropic' as const, id: 'anthropic' },
  ])('$provider: one $id entry with the gateway as base URL, the model, the key and an updatedAt (cline reads none without it)', ({ provider, id }) => {
    const file = clineProviders(runFor(provider, '/home/agent'), 'KEY');
    expect(file).toEqual({
      version: 1, lastUsedProvider: id, modes: {},
      providers: { [id]: { settings: { provider: id, apiKey: 'KEY', model: runFor(provider, '').model, baseUrl: 'http://10.213.0.1:4100/g/ep1/v1' }, updatedAt: expect.any(String), tokenSource: 'manual' } },
    });
    expect(Number.isNaN(Date.parse((file['providers'] as Record<string, { updatedAt: string }>)[id]!.updatedAt))).toBe(false);
  });

  it.each(['openai', 'anthropic'] as const)('%s: the turn\'s shell writes exactly that file, the token from the environment and not in the command', (provider) => {
    const home = mkdtempSync(join(tmpdir(), 'berth-cline-home-'));
    const run = runFor(provider, home);
    const agent = INSTALLED_AGENTS.cline;
    const command = agent.command(run);
    expect(command).not.toContain(TOKEN);
    // The agent's binary is not here, so the turn stops after the files are written; what it wrote is the point.
    try {
      execFileSync('bash', ['-c', command], { env: { PATH: process.env.PATH, ...agent.env(run) }, stdio: 'pipe' });
    } catch { /* no cline binary on this machine */ }
    const written = JSON.parse(readFileSync(join(home, '.cline', 'data', 'settings', 'providers.json'), 'utf8')) as unknown;
    expect(written).toEqual(clineProviders(run, TOKEN));
  });
});
