import { noColor } from '../config/env.ts';

const tty = process.stdout.isTTY === true && !noColor();

const paint = (code: number) => (s: string): string => (tty ? `\x1b[${code}m${s}\x1b[0m` : s);
export const bold = paint(1);
export const dim = paint(2);
export const green = paint(32);
export const red = paint(31);
export const yellow = paint(33);

const visibleLength = (s: string): number => s.replace(/\x1b\[[0-9;]*m/g, '').length;

export function table(headers: string[], rows: Array<Array<string | number>>): string {
  const cells = [headers, ...rows.map((r) => r.map(String))];
  const widths = headers.map((_, i) => Math.max(...cells.map((r) => visibleLength(r[i] ?? ''))));
  const line = (r: string[]) => r.map((c, i) => c + ' '.repeat(Math.max(0, widths[i]! - visibleLength(c)))).join('  ').trimEnd();
  return [bold(line(headers)), ...cells.slice(1).map(line)].join('\n');
}

export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

/** A user-facing failure: message says what is wrong and what fixes it; exit code chosen by the command. */
export class UserError extends Error {
  constructor(message: string, readonly exitCode = 1) {
    super(message);
  }
}
