export type * from './types.ts';
export { AGENTS_ROOT, agentDir } from './types.ts';
export { INSTALLED_AGENTS, installedAgent, isInstalledAgent } from './registry.ts';
export { AgentInstallFailed } from './errors.ts';
export { ensureLayer, layerTag, layerExists, listLayers, imageId, probePython, LAYER_LABEL, type LayerInfo, type LayerResult } from './layer.ts';
export { runInstalledTurn, installedHarness, stopScript, agentArgsOf } from './run.ts';
