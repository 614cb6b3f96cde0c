// spec/task-folder-format.md § What the loader refuses, Unsupported settings: Windows, TPU, network restrictions
// Berth cannot honour (an allowlist, switching the network between phases: DESIGN.md section 7, Network), and a
// shared verifier with its own environment.
import { refuse } from '../errors.ts';
import { TASK_LAYOUT } from '../layout.ts';
import type { NetworkMode, VerifierMode } from '../model.ts';
import type { EnvironmentToml, TaskToml } from '../schema.ts';
import { checkMcpServers } from './invalid-values.ts';
import { stepKey } from './keys.ts';

const file = TASK_LAYOUT.taskToml;

export function checkEnvironmentSupport(e: EnvironmentToml | undefined, key: string): void {
  if (!e) return;
  if (e.os === 'windows') {
    refuse({ code: 'unsupported_os', file, key: `${key}.os`, value: 'windows', problem: 'Windows tasks are not supported', fix: 'use a Linux image and remove os, or set os = "linux"' });
  }
  if (e.tpu !== undefined) {
    refuse({ code: 'unsupported_tpu', file, key: `${key}.tpu`, value: e.tpu, problem: 'TPU tasks are not supported', fix: 'remove the tpu table' });
  }
  checkMcpServers(e, key);
}

/** Every environment table of the task: [environment], [verifier.environment] and each step's. */
export function checkEnvironmentsSupport(doc: TaskToml): void {
  checkEnvironmentSupport(doc.environment, 'environment');
  checkEnvironmentSupport(doc.verifier.environment, 'verifier.environment');
  for (const [i, s] of (doc.steps ?? []).entries()) checkEnvironmentSupport(s.verifier.environment, `steps[${i}].verifier.environment`);
}

export function network(mode: string | undefined): NetworkMode | undefined {
  return mode as NetworkMode | undefined;
}

/** Refuses allowlists and per-phase switching; DESIGN.md section 7 (Network). */
export function checkNetwork(doc: TaskToml, mode: VerifierMode): void {
  const envNet = doc.environment.network_mode ?? 'public';
  const refuseAllowlist = (key: string): never =>
    refuse({
      code: 'unsupported_network',
      file,
      key,
      value: 'allowlist',
      problem: 'an allowlist network is not supported on Docker',
      fix: 'use network_mode = "public" or "no-network"',
    });
  const tables: Array<[string, { network_mode?: string } | undefined]> = [
    ['environment.network_mode', doc.environment],
    ['agent.network_mode', doc.agent],
    ['verifier.network_mode', doc.verifier],
    ['verifier.environment.network_mode', doc.verifier.environment],
  ];
  for (const [i, s] of (doc.steps ?? []).entries()) {
    tables.push([`steps[${i}].agent.network_mode`, s.agent], [`steps[${i}].verifier.network_mode`, s.verifier]);
    tables.push([`steps[${i}].verifier.environment.network_mode`, s.verifier.environment]);
  }
  for (const [key, t] of tables) if (t?.network_mode === 'allowlist') refuseAllowlist(key);

  const switching = (key: string, value: string, phase: string): never =>
    refuse({
      code: 'unsupported_network',
      file,
      key,
      value,
      problem: `switching the network for the ${phase} (the environment's is "${envNet}") is not supported`,
      fix: `remove ${key}, or set [environment].network_mode to the one the whole sandbox should have`,
    });
  const agentNet = network(doc.agent.network_mode);
  if (agentNet !== undefined && agentNet !== envNet) switching('agent.network_mode', agentNet, 'agent phase');
  const verifierNet = network(doc.verifier.network_mode);
  if (mode === 'shared' && verifierNet !== undefined && verifierNet !== envNet) {
    switching('verifier.network_mode', verifierNet, 'shared verifier phase');
  }
  for (const [i, s] of (doc.steps ?? []).entries()) {
    const a = network(s.agent.network_mode);
    if (a !== undefined && a !== envNet) switching(`${stepKey(i, s.name)}.agent.network_mode`, a, `agent phase of step "${s.name}"`);
    const v = network(s.verifier.network_mode);
    if (v !== undefined && v !== envNet) switching(`${stepKey(i, s.name)}.verifier.network_mode`, v, `verifier phase of step "${s.name}"`);
  }
}

export function refuseSharedVerifierWithEnvironment(): never {
  return refuse({
    code: 'shared_verifier_with_environment',
    file,
    key: 'verifier.environment',
    value: 'environment_mode = "shared"',
    problem: 'a shared verifier runs in the agent\'s sandbox and cannot have its own environment',
    fix: 'remove [verifier.environment], or set environment_mode = "separate"',
  });
}
