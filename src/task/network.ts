// Network policies per phase, as Harbor resolves them (Harbor 0.25, Network policy; Harbor's
// trial/network_policy.py): the environment's table is the sandbox's baseline; `[agent]` and `[verifier]` (and the
// steps' own tables, which win) override it for their phase only. `allowed_hosts` entries are normalised as
// Harbor does: a host name, `*.host`, an IP address or a CIDR range; never a URL, a port or a path.
import { isIP } from 'node:net';
import { refuse } from './errors.ts';
import { TASK_LAYOUT } from './layout.ts';
import type { NetworkMode, NetworkPolicy, Task } from './model.ts';

/** A table that may carry a network policy (`[environment]`, `[agent]`, `[verifier]`, a step's). */
export interface NetworkTable {
  readonly network_mode?: string;
  readonly allowed_hosts?: readonly string[];
}

const LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
const NOT_A_HOST = 'allowed_hosts entries must be host names, IP addresses or CIDR ranges, not URLs, ports or paths';

function normaliseCidr(entry: string): string | null {
  const [addr, bits, ...rest] = entry.split('/');
  if (rest.length > 0 || addr === undefined || bits === undefined || !/^\d{1,3}$/.test(bits)) return null;
  const version = isIP(addr);
  const prefix = Number(bits);
  if (version === 0 || prefix > (version === 4 ? 32 : 128)) return null;
  if (version === 4) {
    const n = addr.split('.').reduce((acc, o) => acc * 256 + Number(o), 0);
    const mask = prefix === 0 ? 0 : 2 ** 32 - 2 ** (32 - prefix);
    // Harbor reads ranges strictly: 10.0.0.1/8 (host bits set) is refused.
    if ((n & mask) >>> 0 !== n) return null;
    return `${addr.split('.').map(Number).join('.')}/${prefix}`;
  }
  return `${addr.toLowerCase()}/${prefix}`;
}

/** One entry normalised (lower case, no trailing dot), or why it is refused. */
export function normaliseAllowedHost(raw: string): { ok: true; host: string } | { ok: false; problem: string } {
  const host = raw.trim().toLowerCase().replace(/\.+$/, '');
  if (host === '') return { ok: false, problem: 'allowed_hosts entries must not be empty' };
  if (host.includes('/')) {
    const cidr = normaliseCidr(host);
    return cidr === null ? { ok: false, problem: `${NOT_A_HOST} (a range must be a network address such as 10.0.0.0/8)` } : { ok: true, host: cidr };
  }
  if (host.includes(':')) return isIP(host) === 6 ? { ok: true, host } : { ok: false, problem: NOT_A_HOST };
  if (isIP(host) === 4) return { ok: true, host: host.split('.').map(Number).join('.') };
  let name = host;
  if (host.startsWith('*.')) {
    name = host.slice(2);
    if (name === '') return { ok: false, problem: 'a wildcard entry needs a host name after "*."' };
    if (isIP(name) !== 0) return { ok: false, problem: 'a wildcard entry must name hosts, not an IP address' };
  } else if (host.includes('*')) {
    return { ok: false, problem: 'a wildcard entry must start with "*."' };
  }
  if (!name.split('.').every((l) => LABEL.test(l))) {
    return { ok: false, problem: `${NOT_A_HOST}: letters, digits, "-" and "." only` };
  }
  return { ok: true, host };
}

export type PolicyProblem = { index: number | null; value: unknown; problem: string; fix: string };

/**
 * The table's explicit policy, or null when it names no network_mode. `baseline` tables (environments) default to
 * public. A problem names the entry (or null: the table as a whole).
 */
export function tablePolicy(t: NetworkTable | undefined, baseline: boolean): NetworkPolicy | null | PolicyProblem {
  const mode = t?.network_mode as NetworkMode | undefined;
  const hosts = t?.allowed_hosts;
  if (mode === undefined && !baseline) {
    if (hosts !== undefined) return { index: null, value: hosts, problem: 'allowed_hosts is set without network_mode = "allowlist"', fix: 'add network_mode = "allowlist", or remove allowed_hosts' };
    return null;
  }
  const effective = mode ?? 'public';
  if (effective !== 'allowlist') {
    if (hosts !== undefined && hosts.length > 0) {
      return { index: null, value: hosts, problem: `allowed_hosts only applies to network_mode = "allowlist" (this table's is "${effective}")`, fix: 'set network_mode = "allowlist", or remove allowed_hosts' };
    }
    return { network_mode: effective, allowed_hosts: [] };
  }
  const out: string[] = [];
  for (const [i, h] of (hosts ?? []).entries()) {
    const n = normaliseAllowedHost(h);
    if (!n.ok) return { index: i, value: h, problem: n.problem, fix: 'write a host ("example.com"), a wildcard ("*.example.com"), an IP address or a CIDR range' };
    if (!out.includes(n.host)) out.push(n.host);
  }
  return { network_mode: 'allowlist', allowed_hosts: out };
}

function isPolicyProblem(p: NetworkPolicy | null | PolicyProblem): p is PolicyProblem {
  return p !== null && 'problem' in p;
}

/** A table's network policy, refusing a bad one by its key (`key` names the table: `environment`, `steps[0]("a").agent`). */
export function policyAt(t: NetworkTable | undefined, baseline: true, key: string): NetworkPolicy;
export function policyAt(t: NetworkTable | undefined, baseline: false, key: string): NetworkPolicy | null;
export function policyAt(t: NetworkTable | undefined, baseline: boolean, key: string): NetworkPolicy | null {
  const p = tablePolicy(t, baseline);
  if (!isPolicyProblem(p)) return p;
  return refuse({
    code: 'invalid_value', file: TASK_LAYOUT.taskToml, key: p.index === null ? `${key}.allowed_hosts` : `${key}.allowed_hosts[${p.index}]`,
    value: p.value, problem: p.problem, fix: p.fix,
  });
}

export function samePolicy(a: NetworkPolicy, b: NetworkPolicy): boolean {
  return a.network_mode === b.network_mode && a.allowed_hosts.length === b.allowed_hosts.length &&
    a.allowed_hosts.every((h, i) => b.allowed_hosts[i] === h);
}

export const PUBLIC: NetworkPolicy = { network_mode: 'public', allowed_hosts: [] };

/** The phases of one turn, in order: the step's setup and collect hooks run on the baseline. */
export type Phase = 'baseline' | 'agent' | 'verifier';

type PolicyTask = Pick<Task, 'multi_step' | 'steps' | 'environment' | 'agent' | 'verifier'>;

const policy = (p: NetworkPolicy): NetworkPolicy => ({ network_mode: p.network_mode, allowed_hosts: p.allowed_hosts });

/** The policy of `phase` in `turn` (the verifier's is that of the sandbox test.sh runs in for that turn). */
export function phasePolicy(task: PolicyTask, turn: number, phase: Phase): NetworkPolicy {
  if (phase === 'baseline') return policy(task.environment);
  const step = task.multi_step ? task.steps[turn] : undefined;
  if (phase === 'agent') return policy(step ? step.agent : task.agent);
  return policy(step ? step.verifier : task.verifier);
}

/**
 * The policy a phase gets when the agent's model calls leave from inside the sandbox (an installed agent, through the
 * worker's model gateway): its no-network agent phase becomes an allowlist that admits nothing, so the sandbox is on
 * the egress network, where the gateway is also served, and reaches nothing else (after Harbor's
 * `--allow-agent-host`, which adds the model's host to the agent phase's allowlist). Every other phase is as declared.
 */
export function phasePolicyFor(task: PolicyTask, turn: number, phase: Phase, modelInSandbox: boolean): NetworkPolicy {
  const declared = phasePolicy(task, turn, phase);
  if (!modelInSandbox || phase !== 'agent' || declared.network_mode !== 'no-network') return declared;
  return { network_mode: 'allowlist', allowed_hosts: [] };
}

/** Whether `turn`'s verifier runs in the agent's sandbox. */
function sharedVerifier(task: PolicyTask, turn: number): boolean {
  return (task.multi_step ? task.steps[turn]!.verifier.mode : task.verifier.mode) === 'shared';
}

/**
 * How the agent's sandbox is networked over the episode: `switching` when its phases do not all share the
 * baseline's policy (the sandbox is then moved between networks before each phase), `egress` when some phase is an
 * allowlist (the sandbox carries the proxy settings). `modelInSandbox`: see phasePolicyFor.
 */
export function agentSandboxNetworking(task: PolicyTask, modelInSandbox: boolean): { switching: boolean; egress: boolean } {
  const base = phasePolicy(task, 0, 'baseline');
  const all = [base];
  const turns = task.multi_step ? task.steps.length : 1;
  for (let t = 0; t < turns; t++) {
    all.push(phasePolicyFor(task, t, 'agent', modelInSandbox));
    if (sharedVerifier(task, t)) all.push(phasePolicy(task, t, 'verifier'));
  }
  const egress = all.some((p) => p.network_mode === 'allowlist');
  return { switching: egress || all.some((p) => !samePolicy(p, base)), egress };
}
