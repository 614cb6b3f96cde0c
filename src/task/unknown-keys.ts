// Finds keys of a parsed TOML document that a zod schema does not name, so each can be logged
// once (Harbor and Gym ignore unknown keys; spec/task-folder-format.md § Top level).
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

/** The object schemas a value may be checked against, looking through wrappers and unions. */
function objectShapes(schema: AnySchema, out: any[] = []): any[] {
  const d = def(schema);
  switch (d.type) {
    case 'object':
      out.push(d);
      break;
    case 'optional':
    case 'nullable':
    case 'default':
    case 'prefault':
    case 'readonly':
    case 'catch':
      objectShapes(d.innerType, out);
      break;
    case 'pipe':
      objectShapes(d.in, out);
      break;
    case 'union':
      for (const option of d.options) objectShapes(option, out);
      break;
    default:
      break;
  }
  return out;
}

function arrayElements(schema: AnySchema, out: AnySchema[] = []): AnySchema[] {
  const d = def(schema);
  switch (d.type) {
    case 'array':
      out.push(d.element);
      break;
    case 'optional':
    case 'nullable':
    case 'default':
    case 'prefault':
    case 'readonly':
    case 'catch':
      arrayElements(d.innerType, out);
      break;
    case 'pipe':
      arrayElements(d.in, out);
      break;
    case 'union':
      for (const option of d.options) arrayElements(option, out);
      break;
    default:
      break;
  }
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
