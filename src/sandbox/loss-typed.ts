// The guarantee under every provider: a failure its driver calls loss reaches the layers above as SandboxLost, whatever
// method it came from, so they decide with `instanceof SandboxLost` and never read an engine's words.
import { ENGINE, SandboxLost } from './errors.ts';

/** The sandbox a call was about: a handle's name (or a listed sandbox's), a container's name, else the engine. */
export function sandboxOfCall(args: readonly unknown[]): string {
  const first = args[0];
  if (typeof first === 'string') return first;
  const named = first as { name?: unknown; containerId?: unknown; kind?: unknown } | null;
  if (named && typeof named === 'object' && typeof named.name === 'string' && (typeof named.containerId === 'string' || typeof named.kind === 'string')) return named.name;
  return ENGINE;
}

/**
 * `part` (a provider, a driver, a provider's images or network) with every method's failure that `isLoss` calls loss
 * rethrown as SandboxLost; everything else, and what the methods return, unchanged.
 */
export function lossTyped<T extends object>(part: T, isLoss: (err: unknown) => boolean, nameOf: (args: readonly unknown[]) => string = sandboxOfCall): T {
  const typed = (args: readonly unknown[], err: unknown): unknown => (err instanceof SandboxLost || !isLoss(err) ? err : new SandboxLost(nameOf(args), err));
  return new Proxy(part, {
    get(target, key, receiver) {
      const value: unknown = Reflect.get(target, key, receiver);
      if (typeof value !== 'function' || key === 'constructor') return value;
      return function (this: unknown, ...args: unknown[]): unknown {
        let out: unknown;
        try {
          out = (value as (...a: unknown[]) => unknown).apply(this, args);
        } catch (err) {
          throw typed(args, err);
        }
        if (out instanceof Promise) return out.catch((err: unknown) => { throw typed(args, err); });
        return out;
      };
    },
  });
}
