// `npm run bench -- <name> [args]`: runs bench/<name>.ts. Benchmarks never run in CI.
const [name, ...args] = process.argv.slice(2);
const known = ['loader', 'sandbox', 'episode', 'scale', 'waiting', 'agents', 'compose', 'profile', 'installed', 'vs-floor', 'kubernetes', 'job-dir', 'vs-harbor', 'rollouts', 'store'];
if (!name || !known.includes(name)) {
  console.error(`usage: npm run bench -- <${known.join('|')}> [args]`);
  process.exit(2);
}
const mod = (await import(`./${name}.ts`)) as { default: (args: string[]) => Promise<void> };
await mod.default(args);
process.exit(0);
