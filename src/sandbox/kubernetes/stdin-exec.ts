// A process in a pod with its stdin kept open (execWithStdin: MCP stdio servers), over the exec API's stdin channel
// (v5.channel.k8s.io: ending our stdin closes the process's). Its exit code comes in the status frame the apiserver
// sends before it closes the socket.
import { Exec, type KubeConfig, type V1Status } from '@kubernetes/client-node';
import { PassThrough } from 'node:stream';
import type { StdinProcess } from '../types.ts';
import { exitCodeOfStatus, PodExecError, type PodContainer } from './exec.ts';

export async function startStdinExecInPod(kc: KubeConfig, target: PodContainer, argv: string[]): Promise<StdinProcess> {
  const stdin = new PassThrough();
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  const got: { status?: V1Status } = {};
  let socket;
  try {
    socket = await new Exec(kc).exec(target.namespace, target.pod, target.container, argv, stdout, stderr, stdin, false, (st) => { got.status = st; });
  } catch (err) {
    throw new PodExecError(target, undefined, (err as Error)?.message ?? String(err));
  }
  const exited = new Promise<number | null>((resolve) => {
    socket.once('close', () => {
      stdout.end();
      stderr.end();
      resolve(got.status ? exitCodeOfStatus(got.status) : null);
    });
  });
  return { stdin, stdout, stderr, exited, detach: () => socket.close() };
}
