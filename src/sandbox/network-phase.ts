// The network of one phase (docs/design.md section 7, Network): public is the engine's default bridge; no-network is no
// network at all (only loopback); allowlist is the host's internal egress network, whose one way out is the egress
// proxy on its gateway. What the layers above name; the Docker driver applies it (docker/phase-network.ts).
import type { EgressPolicies } from './egress-proxy.ts';

export const EGRESS_NETWORK = 'berth-egress';

export interface PhaseNetwork {
  mode: 'public' | 'no-network' | 'allowlist';
  /** Allowlist only: the admitted destinations, normalised by the loader. */
  hosts: readonly string[];
}

export interface EgressNetwork {
  id: string;
  name: string;
  /** The host's address on it, where the egress proxy listens. */
  gateway: string;
}

export interface ApplyNetworkOptions {
  /** Present when the sandbox may use the egress proxy (some phase of it is an allowlist). */
  egress?: { network: EgressNetwork; policies: EgressPolicies };
  /** A service of a group: its group networks (internal) stay; only the way out (bridge, egress network) changes. */
  inGroup?: boolean;
}
