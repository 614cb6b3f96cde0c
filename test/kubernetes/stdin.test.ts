import Docker from 'dockerode';
import { randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listMcpTools, runMcpTool, type StdioStarter } from '../../src/agents/index.ts';
import { containerName, DockerSandboxProvider, KubernetesSandboxProvider, SandboxLost, type SandboxHandle, type StdinProcess } from '../../src/sandbox/index.ts';
import { FIRST_BUILD_TIMEOUT_MS, useLocalCluster, waitForPodGone, type LocalCluster } from '../helpers/kubernetes.ts';
import { waitUntil } from '../helpers/worker-process.ts';
import { mcpStdioServer } from '../helpers/mcp-stdio-server.ts';

// A process over its stdin in a pod (issue 23: execWithStdin, what MCP stdio servers and the http relay run on), on
// the local cluster: the exchange, the exit code, the user and workdir, and an MCP stdio server (the one the installed
// agents' MCP tests run, Task Folder Format § [environment] mcp_servers) listed and called as the openai agent does.

const ANSWER = 'berth-k8s-mcp-answer-17';
// MCP's stdio transport (test/helpers/mcp-stdio-server.ts): one tool, `lookup`, answering ANSWER.
const SERVER = mcpStdioServer(ANSWER);

const suffix = randomBytes(4).toString('hex');

async function collect(proc: StdinProcess): Promise<{ stdout: string; stderr: string; code: number | null }> {
  let stdout = '';
  let stderr = '';
  proc.stdout.on('data', (d: Buffer) => { stdout += d.toString('utf8'); });
  proc.stderr.on('data', (d: Buffer) => { stderr += d.toString('utf8'); });
  const code = await proc.exited;
  return { stdout, stderr, code };
}

describe('execWithStdin and addressOf on the Kubernetes sandbox (real cluster)', () => {
  let cluster: LocalCluster;
  let provider: KubernetesSandboxProvider;
  let handle: SandboxHandle;
  const made: string[] = [];

  beforeAll(async () => {
    cluster = await useLocalCluster();
    provider = new KubernetesSandboxProvider({ kubeConfig: cluster.kubeConfig, local: new DockerSandboxProvider(new Docker()), registryHost: cluster.registry });
    const image = (await provider.images.ensure('berth-base:bookworm')).id;
    const workflowId = `berth/k8s-stdin-${suffix}/mcp/1`;
    const name = containerName(workflowId, randomBytes(4).toString('hex'), 'agent');
    made.push(name);
    ({ handle } = await provider.seed({ name, labels: { batch: `k8s-stdin-${suffix}`, workflowId, role: 'agent' }, image, env: {}, network: 'bridge', workdir: '/app', user: 'nobody' }));
    await provider.upload(handle, [{ name: 'mcp_server.py', content: SERVER }], '/app');
  }, FIRST_BUILD_TIMEOUT_MS);

  afterAll(async () => {
    await Promise.all(made.map((n) => provider?.teardown(n).catch(() => undefined)));
    await cluster?.release();
  }, 120_000);

  it('talks to a process line by line while it runs; ending stdin ends it with its exit code', async () => {
    const proc = await provider.execWithStdin(handle, { argv: ['sh', '-c', 'while read -r l; do echo "got $l"; done; id -un >&2; pwd >&2; exit 3'], timeoutSec: 60 });
    const first = new Promise<string>((resolve) => proc.stdout.once('data', (d: Buffer) => resolve(d.toString('utf8'))));
    proc.stdin.write('one\n');
    // An answer before stdin ends: the process runs while we talk to it.
    expect(await first).toBe('got one\n');
    const rest = collect(proc);
    proc.stdin.write('two\n');
    proc.stdin.end();
    expect(await rest).toEqual({ stdout: 'got two\n', stderr: 'nobody\n/app\n', code: 3 });
  }, 60_000);

  it('runs as the user asked, in the environment given', async () => {
    const proc = await provider.execWithStdin(handle, { argv: ['sh', '-c', 'cat; echo "$X $(id -u)"'], user: 'root', env: { X: 'x1' } });
    const out = collect(proc);
    proc.stdin.end('in\n');
    expect(await out).toEqual({ stdout: 'in\nx1 0\n', stderr: '', code: 0 });
  }, 60_000);

  it('an MCP stdio server in the pod: its tools listed and one called, as the openai agent does', async () => {
    const start: StdioStarter = (argv) => provider.execWithStdin(handle, { argv, timeoutSec: 60 });
    const tools = await listMcpTools('vault', { transport: 'stdio', command: 'python3', args: ['/app/mcp_server.py'] }, start);
    expect(tools.map((t) => [t.name, t.tool, t.description])).toEqual([['vault__lookup', 'lookup', 'Looks the answer up.']]);
    const conversation = join(mkdtempSync(join(tmpdir(), 'berth-k8s-mcp-')), 'conversation.jsonl');
    await writeFile(conversation, '');
    const got = await runMcpTool(tools[0]!, { id: 'call_1', name: 'vault__lookup', arguments: {} }, conversation, { startStdio: start, timeoutSec: 30 });
    expect(got).toEqual({ content: ANSWER, reused: false });
  }, 60_000);

  it('addressOf answers the pod IP, where the worker reaches a server in the pod (an MCP http server of a service)', async () => {
    const ip = await provider.network.address(handle.containerId);
    expect(ip).toMatch(/^\d+\.\d+\.\d+\.\d+$/);
    await provider.exec(handle, { command: 'mkdir -p /tmp/www && echo from-the-pod > /tmp/www/hi.txt && (setsid python3 -m http.server --directory /tmp/www 18766 >/dev/null 2>&1 &)' });
    await waitUntil(async () => (await fetch(`http://${ip}:18766/hi.txt`).then((r) => r.text(), () => '')) === 'from-the-pod\n', 30_000, 'the server in the pod');
  }, 60_000);

  it('a pod that is gone is SandboxLost, so a tool call masks the episode rather than failing the tool', async () => {
    const lost = { ...handle };
    await provider.teardown(handle);
    await waitForPodGone(cluster.core, 'default', handle.containerId);
    await expect(provider.execWithStdin(lost, { argv: ['cat'] })).rejects.toBeInstanceOf(SandboxLost);
    await expect(provider.network.address(lost.containerId)).rejects.toBeInstanceOf(SandboxLost);
  }, 60_000);
});
