import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

/** Writes a dataset of small task folders: { "task-id/relative/path": contents }. */
export function writeDataset(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'berth-dataset-'));
  for (const [rel, text] of Object.entries(files)) {
    const path = join(root, rel);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, text, { mode: rel.endsWith('.sh') ? 0o755 : 0o644 });
  }
  return root;
}

export const BASE_TOML = `[environment]\ndocker_image = "berth-base:bookworm"\nworkdir = "/app"\n[agent]\ntimeout_sec = 60\n[verifier]\ntimeout_sec = 60\n`;

/** A single-step task whose oracle writes `value` and whose test rewards 1 when it finds it. */
export function echoTask(id: string, value = 'ok', toml = BASE_TOML): Record<string, string> {
  return {
    [`${id}/task.toml`]: toml,
    [`${id}/instruction.md`]: `Write ${value} to out.txt\n`,
    [`${id}/solution/solve.sh`]: `#!/bin/bash\necho ${value} > out.txt\n`,
    [`${id}/tests/test.sh`]: `#!/bin/bash\nif [ "$(cat /app/out.txt 2>/dev/null)" = "${value}" ]; then echo 1 > /logs/verifier/reward.txt; else echo 0 > /logs/verifier/reward.txt; fi\n`,
  };
}

/** `count` tasks (t0, t1, …) whose oracle sleeps `sleepSec`, then writes ok; their test rewards 1 when it finds it. */
export function sleepyTasks(count: number, sleepSec: number): Record<string, string> {
  const files: Record<string, string> = {};
  for (let i = 0; i < count; i++) {
    files[`t${i}/task.toml`] = BASE_TOML;
    files[`t${i}/instruction.md`] = 'Wait, then write ok to out.txt\n';
    files[`t${i}/solution/solve.sh`] = `#!/bin/bash\ntouch /app/started\nsleep ${sleepSec}\necho ok > out.txt\n`;
    files[`t${i}/tests/test.sh`] = '#!/bin/bash\ngrep -q ok /app/out.txt && echo 1 > /logs/verifier/reward.txt || echo 0 > /logs/verifier/reward.txt\n';
  }
  return files;
}
