// The environment variables that set how Berth's own processes run (docs/configuration.md). Each is read here and
// nowhere else, when asked (tests and the detached worker set them per process). The worker's environment as a
// whole (what a task's `${VAR}` reads) is not configuration and is handed on as it is.

const env = (): NodeJS.ProcessEnv => process.env;

const seconds = (name: string, dflt: number): number => {
  const v = env()[name];
  return v === undefined || v === '' ? dflt : Number(v);
};

/** BERTH_LOG_LEVEL: the Temporal SDK's log level for workers (default WARN). */
export const logLevel = (): string => (env().BERTH_LOG_LEVEL ?? 'WARN').toUpperCase();

/** BERTH_TASK_QUEUE: the shared queue a worker polls and the CLI starts work on (default SHARED_QUEUE). */
export const taskQueueOverride = (): string | undefined => env().BERTH_TASK_QUEUE || undefined;

/** BERTH_HOST_QUEUE_SUFFIX: appended to this host's sandbox queue (tests and benchmarks isolate their workers). */
export const hostQueueSuffix = (): string | undefined => env().BERTH_HOST_QUEUE_SUFFIX;

/** BERTH_DETACHED_WORKER: set in the worker the CLI starts in the background. */
export const isDetachedWorker = (): boolean => Boolean(env().BERTH_DETACHED_WORKER);

/** BERTH_JANITOR_AT_START=0 skips the janitor a worker runs when it starts. */
export const janitorAtStart = (): boolean => env().BERTH_JANITOR_AT_START !== '0';

/** BERTH_HOST_NAME: the host's name in rows and status (default: the engine's machine name). */
export const hostNameOverride = (): string | undefined => env().BERTH_HOST_NAME || undefined;

/** BERTH_WARM_POOL=0 or 1: whether this worker keeps a warm pool, over berth.toml (src/config/warm-pool.ts). */
export const warmPoolSetting = (): string | undefined => env().BERTH_WARM_POOL;

/** BERTH_WORKER_SLOTS: sandbox slots per host (src/config/slots.ts checks the value). */
export const workerSlotsSetting = (): string | undefined => env().BERTH_WORKER_SLOTS;

/** BERTH_HEARTBEAT_TIMEOUT_SEC: how long a silent host activity may go before it is lost (default 45). */
export const heartbeatTimeoutSec = (): number => seconds('BERTH_HEARTBEAT_TIMEOUT_SEC', 45);

/** BERTH_SCHEDULE_TO_START_SEC: a host that does not pick up a sandbox activity within this is lost (default 300). */
export const scheduleToStartSec = (): number => seconds('BERTH_SCHEDULE_TO_START_SEC', 300);

/** BERTH_GATEWAY_RETRY_BASE_MS: the model gateway's first retry delay (tests shorten it). */
export const gatewayRetryBaseMs = (): number | undefined => {
  const v = env().BERTH_GATEWAY_RETRY_BASE_MS;
  return v ? Number(v) : undefined;
};

/** TEMPORAL_CLI: the Temporal CLI binary to use instead of the one the setup installs. */
export const temporalCliOverride = (): string | undefined => env().TEMPORAL_CLI || undefined;

/** DOCKER_HOST: the engine to talk to (default the local socket). */
export const dockerHost = (): string => env().DOCKER_HOST ?? 'unix:///var/run/docker.sock';

/** NO_COLOR: plain output. */
export const noColor = (): boolean => Boolean(env().NO_COLOR);

/** BERTH_CONFIG: the berth.toml a process reads (the detached worker is handed the one of the folder `berth` ran in). */
export const configFileOverride = (): string | undefined => env().BERTH_CONFIG || undefined;

/** BERTH_SUBNET_POOL and BERTH_SUBNET_SIZE: where episode networks' subnets come from (src/sandbox/docker/group-network.ts checks them). */
export const subnetSettings = (): { pool?: string; size?: string } => ({ pool: env().BERTH_SUBNET_POOL, size: env().BERTH_SUBNET_SIZE });

/** BERTH_COMPOSE_CLI (a docker-compose v2 binary) and DOCKER_CONFIG (the docker CLI's folder, whose cli-plugins/ the setup installs Compose in). */
export const composeSettings = (): { cli?: string; dockerConfig?: string } => ({ cli: env().BERTH_COMPOSE_CLI || undefined, dockerConfig: env().DOCKER_CONFIG });

/** BERTH_FINAL_STATE_RETENTION_DAYS: days a kept final state lives; unset or not a positive number, the sandbox's default. */
export const finalStateRetentionDays = (): number | undefined => {
  const v = env().BERTH_FINAL_STATE_RETENTION_DAYS;
  const days = Number(v);
  return v !== undefined && Number.isFinite(days) && days > 0 ? days : undefined;
};
