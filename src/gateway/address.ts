// Where the gateway listens: the engine's bridge gateway address, which the host owns and every sandbox on
// the bridge reaches. BERTH_GATEWAY_HOST overrides it; either way it must be an address of this machine
// (an interface that is down, as docker0 is while no container runs, still owns its address).
import type Docker from 'dockerode';

/** Said when listening there fails with EADDRNOTAVAIL (the address is not this machine's). */
export function notLocalMessage(host: string): string {
  return `the model gateway cannot listen on ${host}: it is not an address of this machine (is the Docker engine remote?). ` +
    'Run the worker on the engine\'s host, or set BERTH_GATEWAY_HOST to a local address that the sandboxes reach';
}

/** The first address of a subnet such as 172.17.0.0/16 (what Docker gives its bridge when no gateway is listed). */
export function firstAddress(subnet: string): string | null {
  const m = /^(\d+)\.(\d+)\.(\d+)\.(\d+)\/\d+$/.exec(subnet);
  return m ? `${m[1]}.${m[2]}.${m[3]}.${Number(m[4]) + 1}` : null;
}

export async function gatewayHost(docker: Docker, env: Readonly<Record<string, string | undefined>> = process.env): Promise<string> {
  let host = env['BERTH_GATEWAY_HOST'];
  if (!host) {
    const info = (await docker.getNetwork('bridge').inspect()) as { IPAM?: { Config?: Array<{ Gateway?: string; Subnet?: string }> } };
    const config = (info.IPAM?.Config ?? []).find((c) => c.Gateway || (c.Subnet && firstAddress(c.Subnet)));
    host = config?.Gateway || (config?.Subnet ? firstAddress(config.Subnet) ?? undefined : undefined);
    if (!host) throw new Error('the Docker engine\'s bridge network lists no gateway address: set BERTH_GATEWAY_HOST to an address of this machine that sandboxes reach');
  }
  return host;
}
