import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { localEpisodeDir } from '../../src/activities/files-home.ts';
import { homeId } from '../../src/host/home-id.ts';
import { hostFilesPut, unpackArchive } from '../../src/activities/host-files.ts';
import { filesQueueName } from '../../src/config/queues.ts';

// Episode files on a cluster queue with no shared storage (issue 23, "No shared filesystem anywhere"; docs/kubernetes.md,
// Episode files without shared storage): the keeper's side of receiving a folder, and the names both sides agree on.

let home: string;
const saved = process.env.BERTH_HOME;
beforeEach(() => {
  home = mkdtempSync(join(tmpdir(), 'berth-files-home-'));
  process.env.BERTH_HOME = home;
});
afterEach(() => {
  if (saved === undefined) delete process.env.BERTH_HOME;
  else process.env.BERTH_HOME = saved;
});

/** A tar archive of a folder holding `files`, as the sending worker makes it. */
function archiveOf(files: Record<string, string>): Buffer {
  const src = mkdtempSync(join(tmpdir(), 'berth-files-src-'));
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(join(src, name, '..'), { recursive: true });
    writeFileSync(join(src, name), text);
  }
  return execFileSync('tar', ['-C', src, '-cf', '-', '.']);
}
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

describe('hostFilesPut: a folder sent back in chunks', () => {
  it('writes each chunk at its offset and unpacks once all of it is here, beside the files already kept', async () => {
    const dir = join(home, 'episodes', 'berth_b_t_1', 'run-1');
    mkdirSync(join(dir, 'turn-1', 'agent'), { recursive: true });
    writeFileSync(join(dir, 'turn-1', 'agent', 'trajectory.json'), '{"kept":true}');
    const archive = archiveOf({ 'turn-1/verifier/reward.txt': '1\n', 'turn-1/verifier/test-stdout.txt': 'x'.repeat(30_000) });
    const cut = [0, 7000, 20_000, archive.length];
    const answers = [];
    // The middle chunk is sent twice (a retried activity): it writes the same bytes again.
    for (const i of [0, 1, 1, 2]) {
      const part = archive.subarray(cut[i]!, cut[i + 1]!);
      answers.push(await hostFilesPut({ dir, offset: cut[i]!, total: archive.length, sha256: sha(archive), data: part.toString('base64') }));
    }
    expect(answers.map((a) => a.unpacked)).toEqual([false, false, false, true]);
    expect(readFileSync(join(dir, 'turn-1', 'verifier', 'reward.txt'), 'utf8')).toBe('1\n');
    expect(readFileSync(join(dir, 'turn-1', 'verifier', 'test-stdout.txt'), 'utf8')).toHaveLength(30_000);
    expect(readFileSync(join(dir, 'turn-1', 'agent', 'trajectory.json'), 'utf8')).toBe('{"kept":true}');
  });

  it('refuses an archive that arrived damaged, and a folder outside this home\'s episodes', async () => {
    const dir = join(home, 'episodes', 'berth_b_t_1', 'run-2');
    const archive = archiveOf({ 'a.txt': 'a' });
    const damaged = Buffer.from(archive);
    damaged[600] = damaged[600]! ^ 0xff;
    await expect(hostFilesPut({ dir, offset: 0, total: archive.length, sha256: sha(archive), data: damaged.toString('base64') }))
      .rejects.toMatchObject({ type: 'berth:files_damaged' });
    await expect(hostFilesPut({ dir: join(home, 'slots'), offset: 0, total: archive.length, sha256: sha(archive), data: archive.toString('base64') }))
      .rejects.toMatchObject({ type: 'berth:not_served' });
    await expect(hostFilesPut({ dir: join(home, 'episodes', '..', 'x'), offset: 0, total: archive.length, sha256: sha(archive), data: archive.toString('base64') }))
      .rejects.toMatchObject({ type: 'berth:not_served' });
  });

  it('unpackArchive replaces what is there and leaves no staging file behind', async () => {
    const dir = join(home, 'episodes', 'w', 'r');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'a.txt'), 'old');
    await unpackArchive(archiveOf({ 'a.txt': 'new', 'b/c.txt': 'c' }), dir);
    expect(readFileSync(join(dir, 'a.txt'), 'utf8')).toBe('new');
    expect(readFileSync(join(dir, 'b', 'c.txt'), 'utf8')).toBe('c');
    expect(execFileSync('ls', ['-A', dir], { encoding: 'utf8' }).split('\n').filter(Boolean).sort()).toEqual(['a.txt', 'b']);
  });
});

describe('the names both sides agree on', () => {
  it('a worker works on an episode another keeps in the same place under its own BERTH_HOME', () => {
    expect(localEpisodeDir('/other/machine/.berth/episodes/berth_b1_hello_1/0193-run')).toBe(join(home, 'episodes', 'berth_b1_hello_1', '0193-run'));
  });

  it('one BERTH_HOME has one id, kept in it (workers sharing the folder share the files queue); another has another', () => {
    const first = homeId();
    expect(first).toMatch(/^[0-9a-f]{12}$/);
    expect(homeId()).toBe(first);
    expect(readFileSync(join(home, 'home-id'), 'utf8').trim()).toBe(first);
    writeFileSync(join(home, 'home-id'), 'not an id\n');
    const replaced = homeId();
    expect(replaced).toMatch(/^[0-9a-f]{12}$/);
    expect(homeId()).toBe(replaced);
    process.env.BERTH_HOME = mkdtempSync(join(tmpdir(), 'berth-files-home-'));
    expect(homeId()).not.toBe(replaced);
    expect(filesQueueName('berth-host-k8s-abc', replaced)).toBe(`berth-host-k8s-abc-files-${replaced}`);
  });
});
