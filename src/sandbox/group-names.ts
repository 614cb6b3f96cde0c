import { createHash } from 'node:crypto';
import type { SandboxRole } from './types.ts';

/** On every container, network and volume of a group: its Compose project name. */
export const LABEL_GROUP = 'berth.group';
/** Compose's own labels, read to find a project's containers and their services. */
export const COMPOSE_PROJECT_LABEL = 'com.docker.compose.project';
export const COMPOSE_SERVICE_LABEL = 'com.docker.compose.service';

const READABLE_MAX = 48;

/**
 * The Compose project of one group: deterministic in (workflow id, run id, role), so a retried seed
 * finds and adopts its project. Compose allows lowercase letters, digits, `-` and `_`, starting with a
 * letter or digit; the readable part is sanitised and cut, and a hash keeps distinct runs distinct.
 */
export function groupProjectName(workflowId: string, runId: string, role: SandboxRole): string {
  const hash = createHash('sha256').update(`${workflowId}\0${runId}\0${role}\0group`).digest('hex').slice(0, 12);
  const readable = workflowId
    .replace(/^berth\//, '')
    .toLowerCase()
    .replace(/[^a-z0-9_-]+/g, '-')
    .replace(/^[^a-z0-9]+/, '')
    .slice(0, READABLE_MAX)
    .replace(/[-_]+$/, '');
  return ['berth', readable, role, hash].filter((p) => p.length > 0).join('-');
}

/** The engine name of the network a project's compose key (usually `default`) stands for. */
export function groupNetworkName(project: string, key: string): string {
  return `${project}_${key}`;
}
