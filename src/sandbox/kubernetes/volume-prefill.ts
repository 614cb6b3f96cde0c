// A volume's first files, as Docker gives them (group-spec.ts volumePrefills): the image's files at the mount point, read
// by the engine beside the worker, rewritten to land in the loader's view of the volume (its root takes the mount
// point's owner and mode, as Docker copies them).
import { Readable } from 'node:stream';
import * as tar from 'tar-stream';

/** `archive` (Docker's archive of one path: its own name first) with every entry moved under `dir`, as a tar stream. */
export function rebasedArchive(archive: Buffer, dir: string): NodeJS.ReadableStream {
  const prefix = dir.replace(/^\/+/, '').replace(/\/+$/, '');
  const extract = tar.extract();
  const pack = tar.pack();
  const moved = (name: string): string => {
    const rest = name.replace(/^\.?\/*/, '').split('/').slice(1).join('/');
    return rest ? `${prefix}/${rest}` : `${prefix}/`;
  };
  extract.on('entry', (header, stream, next) => {
    const h = { ...header, name: moved(header.name), ...(header.type === 'link' && header.linkname ? { linkname: moved(header.linkname) } : {}) };
    stream.pipe(pack.entry(h, (err) => (err ? pack.destroy(err) : next())));
  });
  extract.on('finish', () => pack.finalize());
  extract.on('error', (err) => pack.destroy(err));
  Readable.from([archive]).pipe(extract);
  return pack as unknown as NodeJS.ReadableStream;
}
