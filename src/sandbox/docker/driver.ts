// The Docker driver: the Engine API through dockerode for every primitive, Compose v2 for a group's
// config and up. Engine errors become SandboxLost (or stay as they are) here and nowhere above.
import type Docker from 'dockerode';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { dockerFromEnv } from './client.ts';
import type {
  DriverCapabilities, EngineIdentity, GroupCreateResult, GroupHandle, GroupSpec, LabelledSandbox, PathKind,
  SandboxDriver, ServiceHandle, SingleSandboxSpec,
} from '../driver.ts';
import { ENGINE, SandboxLost } from '../errors.ts';
import { asSandboxError } from './loss.ts';
import { isPlainRoot, type RawExecOptions } from '../exec.ts';
import { runExec } from './exec.ts';
import { ExecChannel } from './exec-channel.ts';
import { DEFAULT_STATE_DIR } from './images.ts';
import type { ImageConfig } from '../image-config.ts';
import { readImageConfig } from './image-inspect.ts';
import { inspectSandbox, resumeSandbox, stopSandbox, teardownSandbox } from './lifecycle.ts';
import { LABEL_POOL, LABEL_WORKFLOW } from '../names.ts';
import type { ExecResult, SandboxInfo } from '../types.ts';
import { createOrAdoptGroup, inspectGroup, listGroups, logTail, removeGroup } from './compose-group.ts';
import type { ComposeCliSettings } from '../compose/cli.ts';
import { subnetSource, type SubnetSource } from './group-network.ts';
import { putOnNetwork } from './phase-network.ts';
import { LABEL_GROUP } from '../group-names.ts';
import { createOrAdoptSingle, handleFromInspect } from './single.ts';
import { ENGINE_ANSWER_SEC } from './engine-deadline.ts';

export interface DockerDriverOptions {
  docker?: Docker;
  /** Where episode networks' subnets come from; default auto (the engine's pools when large enough, else Berth's range). */
  subnets?: SubnetSource;
  compose?: ComposeCliSettings;
  /** Where each group's project files go; default <DEFAULT_STATE_DIR>/groups (the worker gives BERTH_HOME/groups). */
  groupsDir?: string;
  /** How long a seed's image read, create, attach or start, or a removal, may go unanswered (engine-deadline.ts); default ENGINE_ANSWER_SEC. */
  engineAnswerSec?: number;
}

export class DockerDriver implements SandboxDriver {
  readonly docker: Docker;
  readonly sandbox = 'docker';
  readonly capabilities: DriverCapabilities = {
    groups: true, internalNetworks: true, networkSwitching: true, userWithGroup: true, gpus: true, noNetwork: true, allowlist: true, finalState: true, stopStart: true, modelGateway: true,
  };
  private readonly subnets: SubnetSource;
  private readonly compose: ComposeCliSettings;
  private readonly groupsDir: string;
  private readonly answerSec: number;
  /** The exec channels of the single sandboxes this process created (exec-channel.ts), by container id. */
  private readonly channels = new Map<string, ExecChannel>();

  constructor(options: DockerDriverOptions = {}) {
    this.docker = options.docker ?? dockerFromEnv();
    this.subnets = options.subnets ?? subnetSource();
    this.compose = options.compose ?? {};
    this.groupsDir = options.groupsDir ?? join(DEFAULT_STATE_DIR, 'groups');
    this.answerSec = options.engineAnswerSec ?? ENGINE_ANSWER_SEC;
  }

  async engineIdentity(): Promise<EngineIdentity> {
    try {
      const info = (await this.docker.info()) as { ID: string; Name: string; ServerVersion: string };
      return { id: String(info.ID), name: String(info.Name), version: String(info.ServerVersion) };
    } catch (err) {
      throw asSandboxError(ENGINE, err);
    }
  }

  async createOrAdoptSandbox(spec: SingleSandboxSpec): Promise<{ handle: ServiceHandle; adopted: boolean }> {
    const { channel, ...made } = await createOrAdoptSingle(this.docker, this, spec, this.answerSec);
    if (channel) {
      // The seed's own attach; the channel removes itself when it ends.
      const id = made.handle.containerId;
      const opened = new ExecChannel(this.docker, made.handle, channel, () => this.channels.delete(id));
      if (opened.open) this.channels.set(id, opened);
    }
    return made;
  }

  createOrAdoptGroup(spec: GroupSpec): Promise<GroupCreateResult> {
    return createOrAdoptGroup(this.docker, spec, { subnets: this.subnets, stateDir: join(this.groupsDir, spec.project), markers: this, compose: this.compose });
  }

  inspectGroup(project: string): Promise<GroupHandle> {
    return inspectGroup(this.docker, project, this.answerSec);
  }

  async attach(name: string): Promise<ServiceHandle> {
    try {
      return handleFromInspect(await this.docker.getContainer(name).inspect());
    } catch (err) {
      throw (err as { statusCode?: number }).statusCode === 404 ? new SandboxLost(name, err) : asSandboxError(name, err);
    }
  }

  inspect(target: ServiceHandle): Promise<SandboxInfo> {
    return inspectSandbox(this.docker, target);
  }

  logTail(target: ServiceHandle): Promise<string> {
    return logTail(this.docker, target.containerId);
  }

  /** A root command in a sandbox this process created goes over its keep-alive's channel; any other, through exec. */
  async exec(target: ServiceHandle, options: RawExecOptions): Promise<ExecResult> {
    const channel = this.channels.get(target.containerId);
    // The keep-alive, and so every command it runs, is plain root: any other user goes through exec.
    if (channel?.open && options.streamToFile === undefined && isPlainRoot(options.user ?? target.user)) return channel.run(options);
    return runExec(this.docker, target, options, this.answerSec);
  }

  putOnNetwork(target: ServiceHandle, network: string): Promise<void> {
    return putOnNetwork(this.docker, target, network);
  }

  async putArchive(target: ServiceHandle, containerDir: string, archive: Buffer | NodeJS.ReadableStream): Promise<void> {
    try {
      await this.docker.getContainer(target.containerId).putArchive(archive, { path: containerDir });
    } catch (err) {
      throw asSandboxError(target.name, err);
    }
  }

  async getArchive(target: ServiceHandle, containerPath: string): Promise<NodeJS.ReadableStream> {
    let stream: NodeJS.ReadableStream;
    try {
      stream = await this.docker.getContainer(target.containerId).getArchive({ path: containerPath });
    } catch (err) {
      const mapped = asSandboxError(target.name, err);
      if (mapped === err && (err as { statusCode?: number }).statusCode === 404) {
        throw new Error(`${containerPath} does not exist in sandbox ${target.name}`);
      }
      throw mapped;
    }
    // A transfer that breaks half way is a lost sandbox too.
    const out = new PassThrough();
    stream.on('error', (err: unknown) => out.destroy(asSandboxError(target.name, err) as Error));
    stream.pipe(out);
    return out;
  }

  async pathKind(target: ServiceHandle, containerPath: string): Promise<PathKind | null> {
    let res: { headers?: Record<string, string | string[] | undefined>; resume?: () => void };
    try {
      res = (await this.docker.getContainer(target.containerId).infoArchive({ path: containerPath })) as typeof res;
    } catch (err) {
      const mapped = asSandboxError(target.name, err);
      if (mapped === err && (err as { statusCode?: number }).statusCode === 404) return null;
      throw mapped;
    }
    res.resume?.();
    const header = res.headers?.['x-docker-container-path-stat'];
    if (typeof header !== 'string') throw new Error(`the engine gave no stat of ${containerPath} in ${target.name}`);
    const stat = JSON.parse(Buffer.from(header, 'base64').toString('utf8')) as { mode: number };
    // Go's os.FileMode: the directory bit is the top one.
    return (stat.mode & 0x80000000) !== 0 ? 'dir' : 'file';
  }

  stop(target: ServiceHandle): Promise<void> {
    return stopSandbox(this.docker, target);
  }

  start(target: ServiceHandle): Promise<void> {
    return resumeSandbox(this.docker, target);
  }

  async remove(sandbox: Pick<LabelledSandbox, 'name' | 'kind'>): Promise<{ removed: boolean }> {
    if (sandbox.kind === 'single') return teardownSandbox(this.docker, sandbox.name, this.answerSec);
    const r = await removeGroup(this.docker, sandbox.name, this.answerSec);
    return { removed: r.containers + r.networks + r.volumes > 0 };
  }

  async listByLabel(labels: readonly string[]): Promise<LabelledSandbox[]> {
    const wanted = labels.length > 0 ? [...labels] : [LABEL_WORKFLOW];
    const out: LabelledSandbox[] = (await listGroups(this.docker, wanted, this.answerSec)).map((g) => ({ name: g.project, kind: 'group', workflowId: g.workflowId }));
    let singles: Docker.ContainerInfo[];
    try {
      singles = await this.docker.listContainers({ all: true, filters: { label: wanted } });
    } catch (err) {
      throw asSandboxError(ENGINE, err);
    }
    for (const c of singles) {
      if (c.Labels[LABEL_GROUP]) continue;
      // A warm pool's sandbox is judged by the pool's rules (janitorPool), even one labelled for the episode it awaits.
      if (c.Labels[LABEL_POOL] !== undefined && !wanted.includes(LABEL_POOL)) continue;
      out.push({ name: (c.Names[0] ?? c.Id).replace(/^\//, ''), kind: 'single', workflowId: c.Labels[LABEL_WORKFLOW] ?? '' });
    }
    return out;
  }

  imageConfiguration(ref: string): Promise<ImageConfig | null> {
    return readImageConfig(this.docker, ref, this.answerSec);
  }
}
