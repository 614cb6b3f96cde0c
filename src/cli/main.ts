import { CommanderError } from 'commander';
import { berthProgram } from './commands.ts';

try {
  const program = await berthProgram(process.argv.slice(2));
  await program.parseAsync(process.argv);
} catch (err) {
  if (err instanceof CommanderError) {
    process.exitCode = err.exitCode === 0 ? 0 : 2;
  } else {
    const { UserError, red } = await import('./output.ts');
    console.error(red(`berth: ${(err as Error).message}`));
    process.exitCode = err instanceof UserError ? err.exitCode : 1;
  }
}
