// How refusals name a key inside task.toml.

/** `steps[1]("finish")`: the index TOML readers count and the name authors recognise. */
export function stepKey(i: number, name: string): string {
  return `steps[${i}](${JSON.stringify(name)})`;
}

/** A zod issue path as a TOML key: `environment.env.X`, `artifacts[2].source`. */
export function dotted(path: readonly PropertyKey[]): string {
  let out = '';
  for (const seg of path) {
    if (typeof seg === 'number') out += `[${seg}]`;
    else out += out === '' ? String(seg) : `.${String(seg)}`;
  }
  return out;
}
