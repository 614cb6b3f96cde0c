// Copies an episode's logs into its trial folder, from this machine's disk or from a tar archive that came from the
// host that ran it, each path placed by trialPathOf.
import { createWriteStream, existsSync, lstatSync, mkdirSync, readdirSync, copyFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { extract } from 'tar-stream';
import { downloadAttempt, type Manifest, type ResultsStore } from '../../store/index.ts';
import { trialPathOf } from './layout.ts';

/** Where an attempt's files come from: this disk, an archive its host sent, the results store (its attempt's key), or nowhere. */
export type TrialFiles = { local: string } | { archive: Buffer } | { stored: { store: ResultsStore; key: string; manifest?: Manifest } } | { none: string };

function placed(trialDir: string, path: string): string | null {
  const to = trialPathOf(path);
  return to === null ? null : join(trialDir, to);
}

function copyLocal(from: string, trialDir: string, under = from): void {
  for (const name of readdirSync(under)) {
    const abs = join(under, name);
    const st = lstatSync(abs);
    if (st.isDirectory()) copyLocal(from, trialDir, abs);
    else if (st.isFile()) {
      const to = placed(trialDir, relative(from, abs));
      if (!to) continue;
      mkdirSync(dirname(to), { recursive: true });
      copyFileSync(abs, to);
    }
  }
}

async function unpack(archive: Buffer, trialDir: string): Promise<void> {
  const ex = extract();
  const done = new Promise<void>((resolve, reject) => {
    ex.on('entry', (header, stream, next) => {
      const to = header.type === 'file' ? placed(trialDir, header.name) : null;
      if (!to) {
        stream.on('end', next);
        stream.resume();
        return;
      }
      mkdirSync(dirname(to), { recursive: true });
      pipeline(stream, createWriteStream(to)).then(() => next(), reject);
    });
    ex.on('finish', resolve);
    ex.on('error', reject);
  });
  Readable.from([archive]).pipe(ex);
  await done;
}

/** Writes the files into the trial folder; answers where they came from (the trial's `berth.files`). */
export async function placeTrialFiles(files: TrialFiles, trialDir: string): Promise<string> {
  mkdirSync(trialDir, { recursive: true });
  if ('none' in files) return files.none;
  if ('local' in files) {
    if (!existsSync(files.local)) return `${files.local} is not on this machine`;
    copyLocal(files.local, trialDir);
    return `copied from ${files.local}`;
  }
  if ('stored' in files) {
    const { store, key, manifest } = files.stored;
    const m = await downloadAttempt(store, key, trialDir, trialPathOf, manifest);
    return m ? `read from the results store (s3://${store.bucket}/${key}, ${m.files.length} files)` : `not in the results store (s3://${store.bucket}/${key} has no manifest)`;
  }
  await unpack(files.archive, trialDir);
  return `moved from the host that ran it (${files.archive.length} bytes)`;
}
