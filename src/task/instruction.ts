// instruction.md: leading canary lines are dropped (Task Folder Format § Task folder layout:
// "an HTML comment or `#` line containing `canary`").

/** Drops leading canary lines (and an HTML comment spanning several lines) and the blank lines among them. */
export function stripCanary(text: string): string {
  const body = text.startsWith('\uFEFF') ? text.slice(1) : text;
  const first = /\S/.exec(body)?.[0];
  if (first !== '#' && first !== '<') return body;
  const lines = body.split('\n');
  let i = 0;
  let dropped = false;
  while (i < lines.length) {
    const t = lines[i]!.trim();
    if (t === '') {
      i++;
      continue;
    }
    if (t.startsWith('#') && /canary/i.test(t)) {
      dropped = true;
      i++;
      continue;
    }
    if (t.startsWith('<!--')) {
      let j = i;
      let block = '';
      while (j < lines.length) {
        block += `${lines[j]!}\n`;
        if (lines[j]!.includes('-->')) break;
        j++;
      }
      if (j < lines.length && /canary/i.test(block) && block.trim().endsWith('-->')) {
        dropped = true;
        i = j + 1;
        continue;
      }
    }
    break;
  }
  return dropped ? lines.slice(i).join('\n') : body;
}
