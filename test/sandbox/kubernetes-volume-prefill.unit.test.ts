import { describe, expect, it } from 'vitest';
import * as tar from 'tar-stream';
import { rebasedArchive } from '../../src/sandbox/kubernetes/volume-prefill.ts';

// A Compose volume's first files (docs/kubernetes.md, Compose groups): Docker's archive of the image's mount point,
// moved under the loader's view of the volume with owners, modes and links kept.

async function archive(entries: Array<Partial<tar.Header> & Pick<tar.Header, 'name'> & { body?: string }>): Promise<Buffer> {
  const pack = tar.pack();
  for (const { body, ...h } of entries) pack.entry(h, body ?? '');
  pack.finalize();
  const chunks: Buffer[] = [];
  for await (const c of pack as AsyncIterable<Buffer>) chunks.push(c);
  return Buffer.concat(chunks);
}

async function entriesOf(stream: NodeJS.ReadableStream): Promise<Array<Pick<tar.Header, 'name' | 'type' | 'uid' | 'gid' | 'mode' | 'linkname'> & { body: string }>> {
  const out: Array<Pick<tar.Header, 'name' | 'type' | 'uid' | 'gid' | 'mode' | 'linkname'> & { body: string }> = [];
  const extract = tar.extract();
  extract.on('entry', (h, s, next) => {
    let body = '';
    s.on('data', (d) => { body += (d as Buffer).toString(); });
    s.on('end', () => { out.push({ name: h.name, type: h.type, uid: h.uid, gid: h.gid, mode: h.mode, linkname: h.linkname, body }); next(); });
  });
  await new Promise<void>((resolve, reject) => { extract.on('finish', () => resolve()); extract.on('error', reject); stream.pipe(extract); });
  return out;
}

describe('rebasedArchive', () => {
  it('moves the mount point\'s entries under the loader\'s folder; its root becomes the folder itself (owner and mode kept)', async () => {
    const got = await entriesOf(rebasedArchive(await archive([
      { name: 'db/', type: 'directory', uid: 999, gid: 999, mode: 0o700 },
      { name: 'db/PG_VERSION', uid: 999, gid: 999, mode: 0o600, body: '16\n' },
      { name: 'db/base/', type: 'directory', uid: 999, gid: 999, mode: 0o700 },
      { name: 'db/current', type: 'symlink', linkname: 'base', uid: 999, gid: 999, mode: 0o777 },
      { name: 'db/again', type: 'link', linkname: 'db/PG_VERSION', uid: 999, gid: 999, mode: 0o600 },
    ]), '/berth-binds/vol-0123456789'));
    expect(got).toEqual([
      { name: 'berth-binds/vol-0123456789/', type: 'directory', uid: 999, gid: 999, mode: 0o700, linkname: null, body: '' },
      { name: 'berth-binds/vol-0123456789/PG_VERSION', type: 'file', uid: 999, gid: 999, mode: 0o600, linkname: null, body: '16\n' },
      { name: 'berth-binds/vol-0123456789/base/', type: 'directory', uid: 999, gid: 999, mode: 0o700, linkname: null, body: '' },
      { name: 'berth-binds/vol-0123456789/current', type: 'symlink', uid: 999, gid: 999, mode: 0o777, linkname: 'base', body: '' },
      { name: 'berth-binds/vol-0123456789/again', type: 'link', uid: 999, gid: 999, mode: 0o600, linkname: 'berth-binds/vol-0123456789/PG_VERSION', body: '' },
    ]);
  });
});
