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
