// IPv4 subnets for episode networks, allocated by Berth from a configurable range so that many
// concurrent groups never exhaust the engine's default pools (about 30 networks on a stock engine).
// Pure: the engine-facing part is group-network.ts.
import { createHash } from 'node:crypto';

export interface Cidr {
  /** The network address as an unsigned 32-bit number. */
  readonly base: number;
  readonly prefix: number;
}

const CIDR = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})\/(\d{1,2})$/;

/** `10.213.0.0/16` → Cidr; host bits must be zero. Throws a message naming the value and the form expected. */
export function parseCidr(text: string): Cidr {
  const m = CIDR.exec(text.trim());
  const octets = m ? m.slice(1, 5).map(Number) : [];
  const prefix = m ? Number(m[5]) : NaN;
  if (!m || octets.some((o) => o > 255) || prefix > 32) {
    throw new Error(`${JSON.stringify(text)} is not an IPv4 range: write it as a.b.c.d/N, for example 10.213.0.0/16`);
  }
  const base = octets.reduce((acc, o) => acc * 256 + o, 0);
  if (base % blockSize(prefix) !== 0) {
    throw new Error(`${JSON.stringify(text)} has host bits set: write the range's first address, for example ${formatCidr({ base: base - (base % blockSize(prefix)), prefix })}`);
  }
  return { base, prefix };
}

export function formatCidr(c: Cidr): string {
  const o = [24, 16, 8, 0].map((shift) => Math.floor(c.base / 2 ** shift) % 256);
  return `${o.join('.')}/${c.prefix}`;
}

function blockSize(prefix: number): number {
  return 2 ** (32 - prefix);
}

export function overlaps(a: Cidr, b: Cidr): boolean {
  const aEnd = a.base + blockSize(a.prefix);
  const bEnd = b.base + blockSize(b.prefix);
  return a.base < bEnd && b.base < aEnd;
}

/** How many subnets of `/size` fit in `pool` (0 when size is shorter than the pool's prefix). */
export function poolCapacity(pool: Cidr, size: number): number {
  return size < pool.prefix || size > 32 ? 0 : 2 ** (size - pool.prefix);
}

/** A stable starting block for a key, so concurrent allocators seldom try the same block first. */
export function startIndexFor(key: string, capacity: number): number {
  if (capacity <= 0) return 0;
  return createHash('sha256').update(key).digest().readUInt32BE(0) % capacity;
}

/**
 * The first `/size` block of `pool`, scanning from block `start` and wrapping around, that overlaps
 * none of `used`; null when every block is taken.
 */
export function pickSubnet(opts: { pool: Cidr; size: number; used: readonly Cidr[]; start: number }): Cidr | null {
  const capacity = poolCapacity(opts.pool, opts.size);
  const step = blockSize(opts.size);
  for (let i = 0; i < capacity; i++) {
    const index = (((opts.start + i) % capacity) + capacity) % capacity;
    const candidate = { base: opts.pool.base + index * step, prefix: opts.size };
    if (!opts.used.some((u) => overlaps(candidate, u))) return candidate;
  }
  return null;
}

/** The gateway Docker would choose: the block's first host address. */
export function gatewayOf(c: Cidr): string {
  return formatCidr({ base: c.base + 1, prefix: 32 }).replace(/\/32$/, '');
}

/** Networks the engine's own pools can hold (DefaultAddressPools of GET /info). */
export function enginePoolNetworks(pools: readonly { Base: string; Size: number }[] | null | undefined): number {
  let total = 0;
  for (const p of pools ?? []) {
    try {
      total += poolCapacity(parseCidr(p.Base), p.Size);
    } catch {
      // An IPv6 pool or one this reader does not understand adds nothing.
    }
  }
  return total;
}

/** IPv4 routes of /proc/net/route (little-endian hex destination and mask), the default route left out. */
export function parseProcRoutes(text: string): Cidr[] {
  const out: Cidr[] = [];
  for (const line of text.split('\n').slice(1)) {
    const cols = line.trim().split(/\s+/);
    if (cols.length < 8) continue;
    const dest = littleEndianHex(cols[1]!);
    const mask = littleEndianHex(cols[7]!);
    if (dest === null || mask === null || mask === 0) continue;
    const prefix = 32 - Math.log2(2 ** 32 - mask);
    if (!Number.isInteger(prefix)) continue;
    out.push({ base: dest, prefix });
  }
  return out;
}

function littleEndianHex(hex: string): number | null {
  if (!/^[0-9A-Fa-f]{8}$/.test(hex)) return null;
  const b = Buffer.from(hex, 'hex');
  return b.readUInt32LE(0);
}
