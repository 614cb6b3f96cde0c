// Images without bash, made once per engine and reused: Debian's busybox-static (`apt-get install busybox-static`,
// scripts/setup.sh) as a rootfs imported with the engine's import API, the way `tar | docker import` does, so no
// registry is needed. BUSYBOX: /bin/busybox and a link per applet (sh, tar, timeout, ...), no bash. NO_SHELL: the
// static binary alone at /busybox, no /bin/sh (a distroless-like service).
import Docker from 'dockerode';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import * as tar from 'tar-stream';

export const BUSYBOX_IMAGE = 'berth-test-busybox:1';
export const NO_SHELL_IMAGE = 'berth-test-noshell:1';
const BUSYBOX = '/bin/busybox';

const docker = new Docker();

async function present(ref: string): Promise<boolean> {
  return docker.getImage(ref).inspect().then(() => true, () => false);
}

async function importRootfs(ref: string, fill: (pack: tar.Pack) => void, changes: string[]): Promise<void> {
  const pack = tar.pack();
  fill(pack);
  pack.finalize();
  const [repo, tag] = ref.split(':');
  const stream = await docker.importImage(pack as unknown as NodeJS.ReadableStream, { repo, tag, changes });
  await new Promise<void>((resolve, reject) => docker.modem.followProgress(stream, (err) => (err ? reject(err) : resolve())));
}

let made: Promise<void> | undefined;

/** Both images on the local engine (imported only when missing). */
export function ensureShelllessImages(): Promise<void> {
  made ??= (async () => {
    const binary = readFileSync(BUSYBOX);
    if (!(await present(BUSYBOX_IMAGE))) {
      const applets = execFileSync(BUSYBOX, ['--list'], { encoding: 'utf8' }).split('\n').filter((a) => a && a !== 'busybox');
      await importRootfs(BUSYBOX_IMAGE, (pack) => {
        for (const dir of ['bin', 'tmp', 'data']) pack.entry({ name: dir, type: 'directory', mode: dir === 'tmp' ? 0o1777 : 0o755 });
        pack.entry({ name: 'bin/busybox', mode: 0o755 }, binary);
        for (const a of applets) pack.entry({ name: `bin/${a}`, type: 'symlink', linkname: 'busybox' });
      }, ['ENV PATH=/bin', 'CMD ["sleep", "infinity"]']);
    }
    if (!(await present(NO_SHELL_IMAGE))) {
      await importRootfs(NO_SHELL_IMAGE, (pack) => {
        pack.entry({ name: 'data', type: 'directory', mode: 0o755 });
        pack.entry({ name: 'busybox', mode: 0o755 }, binary);
      }, ['CMD ["/busybox", "sleep", "infinity"]']);
    }
  })();
  return made;
}
