import { afterEach, describe, expect, it } from 'vitest';
import { berthProgram, COMMAND_MODULES } from '../../src/cli/commands.ts';

// src/cli/commands.ts lists every command for `berth --help` without loading its module. The listing must be the
// one the modules themselves make, or the fast help would say something the commands do not.
describe('the command table (src/cli/commands.ts)', () => {
  afterEach(() => { delete process.env.BERTH_FINAL_STATE_RETENTION_DAYS; });

  it('berth --help lists every command as its module defines it', async () => {
    const fast = await berthProgram(['--help']);
    const full = await berthProgram([], { all: true });
    expect(fast.helpInformation()).toBe(full.helpInformation());
    expect(fast.commands.map((c) => c.name())).toEqual(full.commands.map((c) => c.name()));
  });

  it('the kept-state retention in gc\'s line follows the setting, as the module\'s does', async () => {
    process.env.BERTH_FINAL_STATE_RETENTION_DAYS = '3';
    const fast = await berthProgram([]);
    // Commander wraps the description to the terminal's width: compare the words.
    expect(fast.helpInformation().replace(/\s+/g, ' ')).toContain('older than 3 days');
    expect(fast.helpInformation()).toBe((await berthProgram([], { all: true })).helpInformation());
  });

  it('a command named on the command line is its module\'s (its options and actions), the others only listed', async () => {
    const program = await berthProgram(['help', 'status']);
    const named = (name: string) => program.commands.find((c) => c.name() === name)!;
    // status comes from src/cli/batch-commands.ts with the rest of that module's commands.
    for (const name of ['status', 'results', 'retry', 'cancel']) expect(named(name).options.length, name).toBeGreaterThan(0);
    expect(named('run').options).toEqual([]);
    expect(program.commands).toHaveLength(COMMAND_MODULES.flatMap((m) => m.commands).length);
  });
});
