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

/** A sidecar that answers `/?url=U&mode=direct|env` with what it sees probing U itself (reach, refused:N, blocked). */
const SIDE_SERVER = `import http.server, urllib.request, urllib.error, urllib.parse
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        q = urllib.parse.parse_qs(urllib.parse.urlparse(self.path).query)
        url, mode = q.get('url', [''])[0], q.get('mode', ['env'])[0]
        out = 'ok'
        if url:
            opener = urllib.request.build_opener(*([urllib.request.ProxyHandler({})] if mode == 'direct' else []))
            try:
                opener.open(url, timeout=4).read()
                out = 'reach'
            except urllib.error.HTTPError as e:
                out = 'refused:%d' % e.code
            except Exception:
                out = 'blocked'
        body = out.encode()
        self.send_response(200)
        self.send_header('Content-Length', str(len(body)))
        self.end_headers()
        self.wfile.write(body)
http.server.ThreadingHTTPServer(('', 8080), H).serve_forever()
`;

/** A Compose file whose sidecar `side` (port 8080) probes for main: healthy once it answers. */
export const PROBING_SIDECAR_COMPOSE = `services:
  main:
    depends_on:
      side:
        condition: service_healthy
  side:
    image: berth-base:bookworm
    command:
      - python3
      - -c
      - |
${SIDE_SERVER.split('\n').map((l) => `        ${l}`).join('\n')}
    healthcheck:
      test: ["CMD", "python3", "-c", "import urllib.request; urllib.request.urlopen('http://localhost:8080/', timeout=2)"]
      interval: 1s
      retries: 30
    deploy:
      resources:
        limits:
          cpus: "0.25"
          memory: 96M
`;

/** `side U MODE`: what the sidecar sees probing U (asked directly on the group's network, never through a proxy). */
export const SIDE = `side() { python3 -c 'import sys, urllib.request, urllib.parse; q = urllib.parse.urlencode({"url": sys.argv[1], "mode": sys.argv[2]}); print(urllib.request.build_opener(urllib.request.ProxyHandler({})).open("http://side:8080/?" + q, timeout=20).read().decode())' "$1" "$2"; }`;
