// The inputs and result of runVerification: what the verify activity hands over after each agent turn.
import type { SandboxHandle, SandboxProvider, SandboxSpec } from '../sandbox/index.ts';
import type { NetworkPolicy, Task } from '../task/index.ts';
import type { AtifTrajectory } from '../trajectory/atif.ts';
import type { CopiedArtifact } from './artifacts.ts';
import type { RewardOutcome } from './reward.ts';

export interface VerifyNaming {
  workflowId: string;
  runId: string;
  batchId: string;
}

/** The network per phase (docs/design.md section 7, Network), supplied by the activity that knows the host's networks. */
export interface VerifyNetwork {
  /** Puts the agent's sandbox on the network of the collect hooks (the baseline) or of a shared test.sh. Idempotent. */
  agentPhase(phase: 'collect' | 'verify'): Promise<void>;
  /** Where a separate verifier's sandbox starts for `policy`, what it carries, and what follows once it runs. */
  separate(policy: NetworkPolicy): Promise<{ network: SandboxSpec['network']; env: Record<string, string>; started(handle: SandboxHandle): Promise<void> }>;
}

export interface VerifyContext {
  provider: SandboxProvider;
  /** The agent's sandbox (seeded by the seed activity). */
  agent: SandboxHandle;
  /** A Compose task's group: every service by name (main is `agent`); collect hooks and artifacts name them. */
  services?: Readonly<Record<string, SandboxHandle>>;
  task: Task;
  /** null for a single-step task; a multi-step turn uses task.steps[stepIndex].verifier. */
  stepIndex: number | null;
  /** Host folder for this turn (exists): /logs/verifier lands in <logsDir>/verifier, artifacts in <logsDir>/artifacts. */
  logsDir: string;
  /** The agent turn's transcript, written to /logs/agent/trajectory.json. */
  trajectory: AtifTrajectory;
  /** The agent's final text (a Python verifier's `response`). */
  responseText: string;
  /** For the separate verifier's container name and labels. */
  naming: VerifyNaming;
  /** The worker's environment, for `${VAR}` templates. */
  hostEnv: Record<string, string | undefined>;
  /** `[secrets]` of berth.toml: fill `${NAME}` in [verifier].env and [steps.verifier].env only, over hostEnv. */
  secrets: Record<string, string>;
  /** Image aliases, for the FROM lines of a separate verifier's tests/Dockerfile. */
  imageAliases?: Record<string, string>;
  /**
   * The default user of the agent image's configuration on record (its USER), when the caller knows it. Used for
   * the verifier user when `[agent].user` is set and `[verifier].user` is not. Unset: read from the engine when the
   * provider is Docker, else root.
   */
  agentImageUser?: string | null;
  /**
   * A later turn still runs in the agent's sandbox: separate verification leaves it running (Harbor stops it only
   * before the last step's separate verifier). Unset: the sandbox is stopped before a separate verifier starts.
   */
  agentNeededAfter?: boolean;
  /** Unset: no switching (the agent's sandbox keeps its network; a separate verifier is public or has none). */
  network?: VerifyNetwork;
  heartbeat: () => void;
  signal?: AbortSignal;
  /**
   * Separate mode, a regrade: the artifacts an earlier verification copied out. The agent's sandbox is gone and is
   * not touched (no collect hooks, no copy); `agent` only names it.
   */
  collected?: CopiedArtifact[];
}

export interface VerifyResult extends RewardOutcome {
  /** Seconds per phase (collect, prepare, test, score, artifacts; separate mode also image and seed). */
  timings: Record<string, number>;
  logsDir: string;
  /** What was copied out, as paths relative to logsDir (e.g. `artifacts`, `artifacts/tmp/x.txt`). */
  artifacts: string[];
  verifierMode: 'shared' | 'separate';
  /** Things that went wrong without affecting the outcome (failed collect hooks, artifacts not found); redacted. */
  warnings: string[];
}
