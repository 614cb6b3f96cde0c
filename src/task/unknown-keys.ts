// Finds keys of a parsed TOML document that a zod schema does not name, so each can be logged
// once (Harbor and Gym ignore unknown keys; spec/task-folder-format.md § Top level).
import type { z } from 'zod';

type AnySchema = z.ZodType;

function def(schema: AnySchema): any {
  return (schema as any)._zod.def;
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
    const shapes = objectShapes(schema);
    if (shapes.length === 0) return found;
    // A loose object (catchall) or record accepts any key.
    if (shapes.some((s) => s.catchall !== undefined && def(s.catchall).type !== 'never')) return found;
    for (const [key, child] of Object.entries(value)) {
      const childSchemas = shapes.map((s) => s.shape[key]).filter((c): c is AnySchema => c !== undefined);
      const path = prefix ? `${prefix}.${key}` : key;
      if (childSchemas.length === 0) {
        found.push(path);
        continue;
      }
      for (const c of childSchemas.slice(0, 1)) found.push(...unknownKeys(c, child, path));
    }
  } else if (Array.isArray(value)) {
    const elements = arrayElements(schema);
    if (elements.length === 0) return found;
    const seen = new Set<string>();
    for (const item of value) {
      for (const k of unknownKeys(elements[0]!, item, `${prefix}[]`)) seen.add(k);
    }
    found.push(...seen);
  }
  return found;
}
