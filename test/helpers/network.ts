// Test servers on this engine for the network tests: two plain HTTP servers on the engine's bridge (where public
// sandboxes are) and on a network of the test's own; everything uniquely named and removed after.
import Docker from 'dockerode';

/** `probe URL direct|env` prints reach, refused:<status> (the proxy said no) or blocked (no way there). */
export const PROBE = `probe() { python3 - "$1" "$2" <<'PY'
import sys, urllib.request, urllib.error
url, mode = sys.argv[1], sys.argv[2]
opener = urllib.request.build_opener(*([urllib.request.ProxyHandler({})] if mode == 'direct' else []))
try:
    opener.open(url, timeout=4).read()
    print('reach')
except urllib.error.HTTPError as e:
    print('refused:%d' % e.code)
except Exception:
    print('blocked')
PY
}`;

export interface TestServers {
  /** http://<ip>:8080/ of each server on the engine's bridge. */
  a: string;
  b: string;
  aIp: string;
  bIp: string;
  network: string;
  remove(): Promise<void>;
}

export async function startTestServers(prefix: string): Promise<TestServers> {
  const docker = new Docker();
  const network = `${prefix}-net`;
  await docker.createNetwork({ Name: network, CheckDuplicate: true, Labels: { 'berth.test': prefix } });
  const names = [`${prefix}-a`, `${prefix}-b`];
  const ips: string[] = [];
  for (const name of names) {
    const c = await docker.createContainer({
      name, Image: 'berth-base:bookworm', Cmd: ['python3', '-m', 'http.server', '8080'], Labels: { 'berth.test': prefix },
      HostConfig: { NetworkMode: 'bridge', Init: true },
    });
    await c.start();
    await docker.getNetwork(network).connect({ Container: c.id });
    ips.push((await c.inspect()).NetworkSettings.Networks.bridge!.IPAddress);
  }
  // Wait until both answer (from the host, which routes to the bridge).
  for (const ip of ips) {
    for (let i = 0; ; i++) {
      const ok = await fetch(`http://${ip}:8080/`).then((r) => r.ok, () => false);
      if (ok) break;
      if (i > 50) throw new Error(`test server ${ip} did not answer`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  return {
    a: `http://${ips[0]}:8080/`, b: `http://${ips[1]}:8080/`, aIp: ips[0]!, bIp: ips[1]!, network,
    async remove() {
      for (const name of names) await docker.getContainer(name).remove({ force: true }).catch(() => undefined);
      await docker.getNetwork(network).remove().catch(() => undefined);
    },
  };
}
