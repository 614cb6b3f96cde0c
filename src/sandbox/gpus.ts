// GPUs for a sandbox (Task Folder Format § Environment: `gpus`): Docker device requests, as `docker run --gpus N`
// sends them. Docker cannot choose a GPU model, so `gpu_types` is not sent (the spec sends a type only when the
// server asks for it); an engine without GPUs refuses the task at prepare.

export interface DeviceRequest {
  Driver: string;
  Count: number;
  DeviceIDs: string[];
  Capabilities: string[][];
  Options: Record<string, string>;
}

/** The device requests for `gpus` GPUs (none for 0 or unset). */
export function gpuDeviceRequests(gpus: number | null | undefined): DeviceRequest[] | undefined {
  if (!gpus || gpus <= 0) return undefined;
  return [{ Driver: '', Count: gpus, DeviceIDs: [], Capabilities: [['gpu']], Options: {} }];
}
