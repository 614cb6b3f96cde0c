// The installed agents Berth knows, by name.
import { aider } from './aider.ts';
import { claudeCode } from './claude-code.ts';
import { cline } from './cline.ts';
import { codex } from './codex.ts';
import { geminiCli } from './gemini-cli.ts';
import { miniSweAgent } from './mini-swe-agent.ts';
import { opencode } from './opencode.ts';
import { openhands } from './openhands.ts';
import { qwenCode } from './qwen-code.ts';
import type { InstalledAgent, InstalledAgentName } from './types.ts';

export const INSTALLED_AGENTS: Readonly<Record<InstalledAgentName, InstalledAgent>> = {
  'claude-code': claudeCode,
  codex,
  'mini-swe-agent': miniSweAgent,
  opencode,
  'gemini-cli': geminiCli,
  'qwen-code': qwenCode,
  cline,
  aider,
  openhands,
};

export function installedAgent(name: string): InstalledAgent | undefined {
  return (INSTALLED_AGENTS as Record<string, InstalledAgent | undefined>)[name];
}

export const isInstalledAgent = (name: string): name is InstalledAgentName => installedAgent(name) !== undefined;
