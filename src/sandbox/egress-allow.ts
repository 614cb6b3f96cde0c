// Whether an allowlist admits a destination (Harbor 0.25, allowed_hosts): a host name matches
// itself, `*.example.com` matches every name under example.com (not example.com itself), an IP address or CIDR range
// matches an address literal, or the addresses a name resolves to. Entries arrive normalised by the loader.
import { BlockList, isIP } from 'node:net';
import { lookup } from 'node:dns/promises';

export interface Allowlist {
  names: string[];
  wildcards: string[];
  addresses: BlockList | null;
}

export function compileAllowlist(entries: readonly string[]): Allowlist {
  const names: string[] = [];
  const wildcards: string[] = [];
  let addresses: BlockList | null = null;
  for (const e of entries) {
    if (e.startsWith('*.')) wildcards.push(e.slice(1));
    else if (e.includes('/') || isIP(e) !== 0) {
      addresses ??= new BlockList();
      const [addr, bits] = e.split('/');
      const family = isIP(addr!) === 6 ? 'ipv6' : 'ipv4';
      if (bits === undefined) addresses.addAddress(addr!, family);
      else addresses.addSubnet(addr!, Number(bits), family);
    } else names.push(e);
  }
  return { names, wildcards, addresses };
}

const stripBrackets = (host: string): string => host.replace(/^\[(.*)\]$/, '$1');

function addressAllowed(list: Allowlist, address: string): boolean {
  const v = isIP(address);
  return list.addresses !== null && v !== 0 && list.addresses.check(address, v === 6 ? 'ipv6' : 'ipv4');
}

/**
 * The address to connect to when `host` is admitted, or null. A name admitted through an IP entry connects to the
 * address that matched, so a second lookup cannot lead somewhere else.
 */
export async function admit(list: Allowlist, rawHost: string, resolve = lookup): Promise<string | null> {
  const host = stripBrackets(rawHost).toLowerCase().replace(/\.+$/, '');
  if (isIP(host) !== 0) return addressAllowed(list, host) ? host : null;
  if (list.names.includes(host) || list.wildcards.some((w) => host.endsWith(w))) return host;
  if (list.addresses === null) return null;
  const found = await resolve(host, { all: true }).catch(() => []);
  return found.find((a) => addressAllowed(list, a.address))?.address ?? null;
}
