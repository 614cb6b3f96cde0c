// Which seeds a warm pool may make ahead (docs/performance-notes.md, The warm pool): a seed keyed by everything it depends
// on, so a claimed sandbox is exactly what a fresh seed of that key gives.
import { createHash } from 'node:crypto';
import { taskFileContent } from '../agents/task-file.ts';
import type { SandboxSpec } from '../sandbox/index.ts';
import { agentSandboxNetworking, type Task } from '../task/index.ts';
import { modelInSandbox } from './phase-network.ts';

/**
 * The seed key of a single sandbox: a digest of its spec without the episode's name and labels (image id, env,
 * user, working directory, resources, network, overlay, uploads, entrypoint, healthchecks), the agent and the files
 * the seed delivers after it. Two tasks that share all of it share pooled sandboxes; values only enter the digest.
 * Undefined when the seed cannot be made ahead: a Compose group, or a sandbox whose network switches by phase (its
 * egress admits the container by name).
 */
export function seedKey(task: Task, spec: SandboxSpec, agent: string | undefined): string | undefined {
  if (task.compose) return undefined;
  if (agentSandboxNetworking(task, modelInSandbox(agent)).switching) return undefined;
  const { name: _name, labels: _labels, ...seeded } = spec;
  const after = { agent: agent ?? null, taskFile: taskFileContent(task, spec.workdir ?? ''), skills: task.skills_source };
  return createHash('sha256').update(JSON.stringify({ seeded, after })).digest('hex').slice(0, 32);
}
