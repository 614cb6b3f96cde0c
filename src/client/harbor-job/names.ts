// How a Berth episode attempt is named in a Harbor job directory: its trial folder and the UUIDs Harbor's models want.
// Deterministic (from the episode workflow id), so a rewrite lands in the same folder with the same ids.
import { createHash } from 'node:crypto';

/** ShortUUID's alphabet, as Harbor's trial names use it. */
const ALPHABET = '23456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';

const digest = (text: string): Buffer => createHash('sha256').update(text).digest();

/** A UUID (version 8, name-based) for `text`: the same text gives the same UUID. */
export function uuidOf(text: string): string {
  const b = digest(text).subarray(0, 16);
  b[6] = (b[6]! & 0x0f) | 0x80;
  b[8] = (b[8]! & 0x3f) | 0x80;
  const h = b.toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/**
 * `<task>__<7 characters>` as Harbor names a trial (the task's last path part cut to 32 characters, `_` and `-`
 * trimmed from its end), the 7 characters drawn from the attempt's workflow id instead of at random.
 */
export function trialName(taskId: string, workflowId: string): string {
  const task = (taskId.split('/').pop() ?? taskId).slice(0, 32).replace(/[_-]+$/, '');
  const bytes = digest(workflowId);
  let suffix = '';
  for (let i = 0; i < 7; i++) suffix += ALPHABET[bytes[i]! % ALPHABET.length];
  return `${task}__${suffix}`;
}
