// The agent harnesses behind one interface (AgentHarness.runTurn), and the pieces of the OpenAI-compatible
// tool-calling agent that the durable (Temporal) version strings together.
import { commandHarness } from './command.ts';
import { AgentConfigError } from './errors.ts';
import { nopHarness } from './nop.ts';
import { openaiHarness } from './openai/local-loop.ts';
import { oracleHarness } from './oracle.ts';
import { INSTALLED_AGENTS } from './installed/registry.ts';
import { installedHarness } from './installed/run.ts';
import type { AgentHarness, HarnessName } from './types.ts';

const HARNESSES: Record<HarnessName, AgentHarness> = {
  oracle: oracleHarness,
  nop: nopHarness,
  command: commandHarness,
  openai: openaiHarness,
  'claude-code': installedHarness(INSTALLED_AGENTS['claude-code']),
  codex: installedHarness(INSTALLED_AGENTS.codex),
  'mini-swe-agent': installedHarness(INSTALLED_AGENTS['mini-swe-agent']),
  opencode: installedHarness(INSTALLED_AGENTS.opencode),
  'gemini-cli': installedHarness(INSTALLED_AGENTS['gemini-cli']),
  'qwen-code': installedHarness(INSTALLED_AGENTS['qwen-code']),
  cline: installedHarness(INSTALLED_AGENTS.cline),
  aider: installedHarness(INSTALLED_AGENTS.aider),
  openhands: installedHarness(INSTALLED_AGENTS.openhands),
};

export const HARNESS_NAMES = Object.keys(HARNESSES) as HarnessName[];

export function harnessFor(name: string): AgentHarness {
  const h = (HARNESSES as Record<string, AgentHarness | undefined>)[name];
  if (!h) throw new AgentConfigError(`unknown agent "${name}": choose one of ${HARNESS_NAMES.join(', ')}`);
  return h;
}

export type * from './types.ts';
export { AgentConfigError, SolutionEnvUnset } from './errors.ts';
export { oracleHarness, runOracleTurn, solutionEnv, ORACLE_COMMAND, ORACLE_OUTPUT, SOLUTION_DIR } from './oracle.ts';
export { nopHarness, runNopTurn } from './nop.ts';
export { commandHarness, runCommandTurn, COMMAND_STDOUT, COMMAND_STDERR, INSTRUCTION_FILE, RESPONSE_FILE } from './command.ts';
export { detachedKey } from './detached-run.ts';
export * from './openai/index.ts';
export * from './installed/index.ts';
