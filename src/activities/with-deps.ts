// Registration: each activity bound to the worker's host services, under the name Temporal knows it by.
import type { HostServices } from '../host/deps.ts';

type Bound<F> = F extends (deps: HostServices, ...args: infer A) => infer R ? (...args: A) => R : never;

/** The activities as Temporal registers them (by these names): each with `deps` given. */
export function withDeps<T extends Record<string, (deps: HostServices, ...args: never[]) => unknown>>(deps: HostServices, fns: T): { [K in keyof T]: Bound<T[K]> } {
  return Object.fromEntries(Object.entries(fns).map(([name, fn]) => [name, (...args: never[]) => fn(deps, ...args)])) as { [K in keyof T]: Bound<T[K]> };
}
