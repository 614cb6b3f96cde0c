import { InvalidArgumentError } from 'commander';

/** Parses repeatable KEY=VALUE options (--image-alias FROM=TO, --agent-arg KEY=VALUE). */
export function keyValue(flag: string) {
  return (value: string, previous: Record<string, string> = {}): Record<string, string> => {
    const at = value.indexOf('=');
    if (at <= 0) throw new InvalidArgumentError(`${flag} takes KEY=VALUE, got "${value}"`);
    return { ...previous, [value.slice(0, at)]: value.slice(at + 1) };
  };
}

export function positiveInt(flag: string) {
  return (value: string): number => {
    const n = Number(value);
    if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError(`${flag} takes a whole number ≥ 1, got "${value}"`);
    return n;
  };
}

export function positiveNumber(flag: string) {
  return (value: string): number => {
    const n = Number(value);
    if (value.trim() === '' || !Number.isFinite(n) || n <= 0) throw new InvalidArgumentError(`${flag} takes a number > 0, got "${value}"`);
    return n;
  };
}

export const collect = (value: string, previous: string[] = []): string[] => [...previous, value];

export function globToRegExp(glob: string): RegExp {
  const body = glob.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.');
  return new RegExp(`^${body}$`);
}
