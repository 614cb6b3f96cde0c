import { dockerHost } from '../config/env.ts';
import { request } from 'node:http';

/** Where the engine is: DOCKER_HOST (unix:// or tcp://) or the default socket. */
export function dockerEndpoint(): { socketPath?: string; host?: string; port?: number; label: string } {
  const h = dockerHost();
  if (h.startsWith('unix://')) return { socketPath: h.slice('unix://'.length), label: h };
  const url = new URL(h.replace(/^tcp:/, 'http:'));
  return { host: url.hostname, port: Number(url.port || 2375), label: h };
}

/** True when the Docker engine answers /_ping. */
export function dockerAnswers(timeoutMs = 3000): Promise<boolean> {
  const ep = dockerEndpoint();
  return new Promise((resolve) => {
    const req = request({ socketPath: ep.socketPath, host: ep.host, port: ep.port, path: '/_ping', timeout: timeoutMs }, (res) => {
      res.resume();
      resolve(res.statusCode === 200);
    });
    req.on('timeout', () => { req.destroy(); resolve(false); });
    req.on('error', () => resolve(false));
    req.end();
  });
}
