// Whether this worker keeps a warm pool (docs/performance-notes.md, The warm pool): `berth worker --no-warm-pool` wins
// (src/worker.ts), then BERTH_WARM_POOL, then berth.toml's [worker].warm_pool; on by default.
import { loadBerthConfig } from './berth-config.ts';
import { warmPoolSetting } from './env.ts';

export function warmPoolEnabled(): { on: boolean; from: string } {
  const env = warmPoolSetting();
  if (env !== undefined && env !== '') {
    if (env !== '0' && env !== '1') throw new Error(`BERTH_WARM_POOL=${env} is neither 0 nor 1; set it to 0 to turn the warm pool off, or unset it`);
    return { on: env === '1', from: 'BERTH_WARM_POOL' };
  }
  const { config, file } = loadBerthConfig();
  if (config.worker.warm_pool !== undefined) return { on: config.worker.warm_pool, from: `${file} [worker].warm_pool` };
  return { on: true, from: 'default' };
}
