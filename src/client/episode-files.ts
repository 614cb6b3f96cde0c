// What the viewer shows of one episode, read from its logs folder on this host (docs/design.md section 3, Results):
// per turn the ATIF trajectory, the verifier's output and reward files. Bounded: a page never holds a whole log.
import { closeSync, existsSync, openSync, readdirSync, readSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { AtifTrajectory } from '../trajectory/atif-types.ts';

/** A text file's last `cap` bytes (the end of a log is what explains it), and how much was left out. */
export interface FileText { name: string; text: string; omittedBytes: number }

export interface TurnFiles {
  turn: number;
  trajectory: AtifTrajectory | null;
  /** Why there is no trajectory (missing, too large, not JSON). */
  trajectoryProblem: string | null;
  /** test-stdout.txt, then test-stderr.txt when present. */
  verifierOutput: FileText[];
  /** reward.txt and reward.json, as the verifier wrote them. */
  rewardFiles: FileText[];
  /** Every other file the verifier left in /logs/verifier, by name. */
  otherVerifierFiles: string[];
}

export interface EpisodeFiles { logsDir: string | null; problem: string | null; turns: TurnFiles[] }

const TEXT_CAP = 128 * 1024;
const TRAJECTORY_CAP = 8 * 1024 * 1024;
const OUTPUT_FILES = ['test-stdout.txt', 'test-stderr.txt'];
const REWARD_FILES = ['reward.txt', 'reward.json'];

function readTail(path: string, cap: number): { text: string; omittedBytes: number } {
  const size = statSync(path).size;
  const length = Math.min(size, cap);
  const buf = Buffer.alloc(length);
  const fd = openSync(path, 'r');
  try {
    readSync(fd, buf, 0, length, size - length);
  } finally {
    closeSync(fd);
  }
  return { text: buf.toString('utf8'), omittedBytes: size - length };
}

const textFile = (dir: string, name: string): FileText | null =>
  existsSync(join(dir, name)) && statSync(join(dir, name)).isFile() ? { name, ...readTail(join(dir, name), TEXT_CAP) } : null;

function readTrajectory(agentDir: string): { trajectory: AtifTrajectory | null; problem: string | null } {
  const path = join(agentDir, 'trajectory.json');
  if (!existsSync(path)) return { trajectory: null, problem: `no trajectory.json in ${agentDir}` };
  const size = statSync(path).size;
  if (size > TRAJECTORY_CAP) return { trajectory: null, problem: `${path} is ${size} bytes, more than the viewer reads (${TRAJECTORY_CAP}); open it directly` };
  try {
    return { trajectory: JSON.parse(readTail(path, TRAJECTORY_CAP).text) as AtifTrajectory, problem: null };
  } catch (err) {
    return { trajectory: null, problem: `${path} is not JSON: ${(err as Error).message}` };
  }
}

function readTurn(dir: string, turn: number): TurnFiles {
  const { trajectory, problem } = readTrajectory(join(dir, 'agent'));
  const verifierDir = join(dir, 'verifier');
  const names = existsSync(verifierDir) ? readdirSync(verifierDir).sort() : [];
  const pick = (wanted: string[]) => wanted.map((n) => textFile(verifierDir, n)).filter((f): f is FileText => f !== null);
  return {
    turn, trajectory, trajectoryProblem: problem,
    verifierOutput: pick(OUTPUT_FILES),
    rewardFiles: pick(REWARD_FILES),
    otherVerifierFiles: names.filter((n) => !OUTPUT_FILES.includes(n) && !REWARD_FILES.includes(n)),
  };
}

/**
 * The turns found under an episode's logs folder (or its Harbor trial folder): turn-1, turn-2, … of a single-step
 * task, or steps/<name>/ of a multi-step one (in the order of `stepNames`, the row's turns), or why there are none here.
 */
export function readEpisodeFiles(logsDir: string | null, stepNames: readonly string[] = []): EpisodeFiles {
  if (!logsDir) return { logsDir, problem: 'the row names no logs folder (the episode stopped before its sandbox was seeded)', turns: [] };
  if (!existsSync(logsDir)) return { logsDir, problem: `${logsDir} is not on this machine: per-episode logs stay on the host that ran the episode`, turns: [] };
  const stepTurns = stepNames
    .map((name, i) => ({ dir: join(logsDir, 'steps', name), turn: i + 1 }))
    .filter((s) => existsSync(s.dir));
  if (stepTurns.length > 0) return { logsDir, problem: null, turns: stepTurns.map((s) => readTurn(s.dir, s.turn)) };
  const turns = readdirSync(logsDir)
    .map((n) => /^turn-(\d+)$/.exec(n))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => Number(m[1]))
    .sort((a, b) => a - b);
  // A Harbor trial folder keeps a single-step trial's agent/ and verifier/ at its root.
  if (turns.length === 0 && ['agent', 'verifier'].some((d) => existsSync(join(logsDir, d)))) return { logsDir, problem: null, turns: [readTurn(logsDir, 1)] };
  return { logsDir, problem: null, turns: turns.map((t) => readTurn(join(logsDir, `turn-${t}`), t)) };
}
