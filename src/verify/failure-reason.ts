// A failure_reason is the problem in one line plus the end of test-stdout.txt, bounded so rows stay small
// (the whole log stays on disk with the verifier logs).

export const STDOUT_TAIL_CHARS = 600;
export const FAILURE_REASON_MAX_CHARS = 2000;

/** The last `max` characters of `text`, marked with a leading ellipsis when cut. */
export function tailOf(text: string, max: number = STDOUT_TAIL_CHARS): string {
  if (text.length <= max) return text;
  return '…' + text.slice(text.length - max);
}

/**
 * `problem; tail of test-stdout.txt: <tail>`, at most FAILURE_REASON_MAX_CHARS long.
 * `stdout` undefined means there was no test-stdout.txt at all.
 */
export function failureReason(problem: string, stdout: string | undefined): string {
  let tail: string;
  if (stdout === undefined) tail = '(no test-stdout.txt)';
  else if (stdout.trim() === '') tail = '(test-stdout.txt is empty)';
  else tail = tailOf(stdout);
  const reason = `${problem}; tail of test-stdout.txt: ${tail}`;
  if (reason.length <= FAILURE_REASON_MAX_CHARS) return reason;
  // Keep the start of the problem and the end of the log: both ends carry the information.
  const keepTail = Math.min(tail.length, FAILURE_REASON_MAX_CHARS / 2);
  const head = `${problem}; tail of test-stdout.txt: `.slice(0, FAILURE_REASON_MAX_CHARS - keepTail - 1);
  return head + '…' + tail.slice(tail.length - keepTail);
}
