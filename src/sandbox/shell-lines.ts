// Shell lines the sandbox scripts share. Each tests first with the shell's own `[`, so a folder already there or a
// path not there costs no process (every seed, launch and verification runs these; issue 25).
import { shellQuote } from './names.ts';

/** Makes the folder (and its parents) unless it is one already. */
export function mkdirUnlessThere(path: string): string {
  const p = shellQuote(path);
  return `[ -d ${p} ] || mkdir -p -- ${p}`;
}

/** Removes the path (`rm` with these flags) when anything is there, a dangling link included. */
export function removeIfThere(path: string, flags: '-f' | '-rf'): string {
  const p = shellQuote(path);
  return `if [ -e ${p} ] || [ -L ${p} ]; then rm ${flags} -- ${p}; fi`;
}

/**
 * Sets `variable` to 1 when a line of `file` matches the `case` pattern `pattern` (empty otherwise; a missing file
 * matches nothing). The shell reads the file itself: a grep would be a process of its own.
 */
export function lineMatches(variable: string, file: string, pattern: string): string {
  return `${variable}=; { while IFS= read -r berth_line || [ -n "$berth_line" ]; do case "$berth_line" in ${pattern}) ${variable}=1; break ;; esac; done < ${shellQuote(file)}; } 2>/dev/null || true`;
}
