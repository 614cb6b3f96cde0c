// berth.toml and the environment variables Berth reads, each resolved once here (docs/design.md section 2: a bottom
// module, import-free of the rest of src).
export { configFilePath, loadBerthConfig, loaderOptions, type BerthConfig, type LoadedConfig } from './berth-config.ts';
export { berthHome, berthHomeDir, homePath } from './paths.ts';
export * from './temporal.ts';
export * from './search-attributes.ts';
export { SHARED_QUEUE, filesQueueName, hostQueueName, sandboxSharedQueue, sharedQueue } from './queues.ts';
export * from './env.ts';
