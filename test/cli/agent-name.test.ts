import { describe, expect, it } from 'vitest';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkAgentName, startBatch } from '../../src/client/batch.ts';
import { AGENT_NAMES, INSTALLED_AGENT_NAMES, isInstalledAgentName, type AgentName } from '../../src/config/agents.ts';
import { INSTALLED_AGENTS } from '../../src/agents/installed/registry.ts';
import { berth } from '../helpers/cli.ts';

// Issue 12, bad input before work: an unknown --agent is refused before a batch starts, listing the agents.
describe('an unknown agent name', () => {
  it('`berth run` refuses it before anything starts (no server, no results folder), listing the agents; exit 2', async () => {
    const results = join(mkdtempSync(join(tmpdir(), 'berth-agent-')), 'results');
    const r = await berth(['run', 'examples/hello', '--agent', 'gpt-agent', '--results', results]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("option '-a, --agent <name>' argument 'gpt-agent' is invalid. Allowed choices are oracle, nop, command, openai, claude-code, codex, mini-swe-agent, opencode, gemini-cli, qwen-code, cline, aider, openhands.");
    expect(r.stdout).not.toContain('batch');
    expect(existsSync(results)).toBe(false);
  });

  it('startBatch refuses it before loading the dataset or connecting, listing the agents', async () => {
    // A dataset that does not exist and no client: the agent is the first thing checked.
    await expect(startBatch({ dataset: '/no/such/dataset', agent: 'gpt-agent' as AgentName }))
      .rejects.toThrow('Unknown agent "gpt-agent". Choose one of oracle, nop, command, openai, claude-code, codex, mini-swe-agent, opencode, gemini-cli, qwen-code, cline, aider, openhands.');
  });

  it.each(AGENT_NAMES)('%s is accepted', (name) => expect(() => checkAgentName(name)).not.toThrow());
});

describe('the agent names the CLI and the client accept', () => {
  it('name exactly the installed agents of src/agents (INSTALLED_AGENT_NAMES)', () => {
    expect([...INSTALLED_AGENT_NAMES].sort()).toEqual(Object.keys(INSTALLED_AGENTS).sort());
    for (const name of INSTALLED_AGENT_NAMES) expect(isInstalledAgentName(name)).toBe(true);
    expect(isInstalledAgentName('oracle')).toBe(false);
  });
});
