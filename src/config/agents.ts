// The agent names a user may pass (`--agent`, startBatch's `agent`), checked before any batch starts. The harnesses
// of src/agents and its installed-agent registry are the same lists (test/agents/pure.unit.test.ts checks they agree).

export const AGENT_NAMES = ['oracle', 'nop', 'command', 'openai', 'claude-code', 'codex', 'mini-swe-agent', 'opencode', 'gemini-cli', 'qwen-code', 'cline', 'aider', 'openhands'] as const;
export type AgentName = (typeof AGENT_NAMES)[number];

/** The agents installed into a layer over a task's image (`berth prepare --agent`, `berth agents`). */
export const INSTALLED_AGENT_NAMES = ['claude-code', 'codex', 'mini-swe-agent', 'opencode', 'gemini-cli', 'qwen-code', 'cline', 'aider', 'openhands'] as const satisfies readonly AgentName[];
export type InstalledAgentName = (typeof INSTALLED_AGENT_NAMES)[number];

export const isInstalledAgentName = (name: string): name is InstalledAgentName => (INSTALLED_AGENT_NAMES as readonly string[]).includes(name);
