// An image with python3 and pydantic 2 for validating a dataset's task_data.py (NeMo Gym's models are Pydantic
// models): berth-base:bookworm plus pydantic's wheels, fetched on the host from PyPI (the containers have no
// network) and unpacked by the image's own python3 (it has no pip).
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { harborVenv } from './harbor.ts';

const run = promisify(execFile);
export const PYDANTIC_IMAGE = 'berth-test-pydantic:bookworm';
const PYDANTIC = 'pydantic==2.14.4';

export async function ensurePydanticImage(): Promise<string> {
  const have = await run('docker', ['image', 'inspect', PYDANTIC_IMAGE]).then(() => true, () => false);
  if (have) return PYDANTIC_IMAGE;
  const ctx = mkdtempSync(join(tmpdir(), 'berth-pydantic-'));
  try {
    // berth-base:bookworm's python3 is 3.11.
    await run(join(harborVenv(), 'bin', 'pip'), ['download', '-q', '--only-binary=:all:', '--python-version', '3.11', '--implementation', 'cp',
      '--platform', 'manylinux2014_x86_64', '-d', join(ctx, 'wheels'), PYDANTIC], { timeout: 300_000 });
    const wheels = readdirSync(join(ctx, 'wheels')).filter((w) => w.endsWith('.whl'));
    writeFileSync(join(ctx, 'Dockerfile'), [
      'FROM berth-base:bookworm',
      'COPY wheels /tmp/wheels',
      `RUN for w in ${wheels.map((w) => `/tmp/wheels/${w}`).join(' ')}; do python3 -m zipfile -e "$w" /usr/lib/python3/dist-packages || exit 1; done && rm -rf /tmp/wheels && python3 -c "import pydantic"`,
      '',
    ].join('\n'));
    await run('docker', ['build', '-q', '-t', PYDANTIC_IMAGE, ctx], { timeout: 300_000 });
    return PYDANTIC_IMAGE;
  } finally {
    rmSync(ctx, { recursive: true, force: true });
  }
}
