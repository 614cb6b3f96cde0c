// A parsed TOML table (smol-toml gives plain objects; dates and arrays are not tables).
export type Table = Record<string, unknown>;

export function isTable(v: unknown): v is Table {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Date);
}
