// Finds keys of a parsed TOML document that a zod schema does not name, so each can be logged
// once (Harbor and Gym ignore unknown keys; Task Folder Format § Top level).
import type { z } from 'zod';

type AnySchema = z.ZodType;

function def(schema: AnySchema): any {
  return (schema as any)._zod.def;
}

const shapeCache = new WeakMap<AnySchema, any[]>();
const elementCache = new WeakMap<AnySchema, AnySchema[]>();

function cachedShapes(schema: AnySchema): any[] {
  let v = shapeCache.get(schema);
  if (v === undefined) {
    v = objectShapes(schema);
    shapeCache.set(schema, v);
  }
  return v;
}

function cachedElements(schema: AnySchema): AnySchema[] {
  let v = elementCache.get(schema);
  if (v === undefined) {
    v = arrayElements(schema);
    elementCache.set(schema, v);
  }
  return v;
}

/** Looks through wrappers (optional, default, pipe, …) and unions, calling `found` on every other schema. */
function throughWrappers(schema: AnySchema, found: (d: any) => void): void {
  const d = def(schema);
  switch (d.type) {
    case 'optional':
    case 'nullable':
    case 'default':
    case 'prefault':
    case 'readonly':
    case 'catch':
      throughWrappers(d.innerType, found);
      break;
    case 'pipe':
      throughWrappers(d.in, found);
      break;
    case 'union':
      for (const option of d.options) throughWrappers(option, found);
      break;
    default:
      found(d);
  }
}

/** The object schemas a value may be checked against, looking through wrappers and unions. */
function objectShapes(schema: AnySchema): any[] {
  const out: any[] = [];
  throughWrappers(schema, (d) => { if (d.type === 'object') out.push(d); });
  return out;
}

function arrayElements(schema: AnySchema): AnySchema[] {
  const out: AnySchema[] = [];
  throughWrappers(schema, (d) => { if (d.type === 'array') out.push(d.element); });
  return out;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Date);
}

/** Dotted paths of keys in `value` that `schema` does not declare. Arrays use `[]`. */
export function unknownKeys(schema: AnySchema, value: unknown, prefix = ''): string[] {
  const found: string[] = [];
  if (isPlainObject(value)) {
    const shapes = cachedShapes(schema);
    if (shapes.length === 0) return found;
    // A loose object (catchall) or record accepts any key.
    if (shapes.some((s) => s.catchall !== undefined && def(s.catchall).type !== 'never')) return found;
    for (const key in value) {
      let childSchema: AnySchema | undefined;
      for (const s of shapes) {
        childSchema = s.shape[key];
        if (childSchema !== undefined) break;
      }
      const path = prefix ? `${prefix}.${key}` : key;
      if (childSchema === undefined) found.push(path);
      else {
        const child = value[key];
        if (typeof child === 'object' && child !== null) found.push(...unknownKeys(childSchema, child, path));
      }
    }
  } else if (Array.isArray(value)) {
    const elements = cachedElements(schema);
    if (elements.length === 0) return found;
    const seen = new Set<string>();
    for (const item of value) {
      for (const k of unknownKeys(elements[0]!, item, `${prefix}[]`)) seen.add(k);
    }
    found.push(...seen);
  }
  return found;
}
