// Where the gateway listens: the engine's bridge gateway address, which the host owns and every sandbox on
// the bridge reaches. BERTH_GATEWAY_HOST overrides it; either way it must be an address of this machine
// (an interface that is down, as docker0 is while no container runs, still owns its address).

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

/** `ranges`: the sandboxes' default network ranges, as the sandbox provider reads them from its engine. */
export async function gatewayHost(
  ranges: () => Promise<Array<{ gateway: string | null; subnet: string | null }>>,
  env: Readonly<Record<string, string | undefined>> = process.env,
): Promise<string> {
  let host = env['BERTH_GATEWAY_HOST'];
  if (!host) {
    const range = (await ranges()).find((c) => c.gateway || (c.subnet && firstAddress(c.subnet)));
    host = range?.gateway || (range?.subnet ? firstAddress(range.subnet) ?? undefined : undefined);
    if (!host) throw new Error('the Docker engine\'s bridge network lists no gateway address: set BERTH_GATEWAY_HOST to an address of this machine that sandboxes reach');
  }
  return host;
}
