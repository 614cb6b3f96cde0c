import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startBatch } from '../../src/client/batch.ts';
import { startTestWorkers, type TestCluster } from '../helpers/temporal.ts';
import { writeDataset } from '../helpers/tasks.ts';

// The limits the sandbox really got, read from its cgroup (v1 or v2), as reward.json keys.
const REPORT_LIMITS = `#!/bin/bash
if [ -f /sys/fs/cgroup/cpu.max ]; then read q p < /sys/fs/cgroup/cpu.max; m=$(cat /sys/fs/cgroup/memory.max)
else q=$(cat /sys/fs/cgroup/cpu/cpu.cfs_quota_us); p=$(cat /sys/fs/cgroup/cpu/cpu.cfs_period_us); m=$(cat /sys/fs/cgroup/memory/memory.limit_in_bytes); fi
python3 -c "import json,sys; q,p,m=sys.argv[1:]; print(json.dumps({'reward': 1, 'cpus': int(q)/int(p), 'memory_mb': int(m)/1048576}))" "$q" "$p" "$m" > /logs/verifier/reward.json
`;

// docs/design.md section 7, Config file ([resources] overrides) and Effective values; Task Folder Format
// § [environment]: the override replaces the cpus and memory_mb it names, after dataset.toml's multiplier.
describe('berth.toml [resources] end to end', () => {
  let cluster: TestCluster;
  beforeAll(async () => { cluster = await startTestWorkers('resources'); });
  afterAll(async () => { await cluster?.stop(); });

  it('the sandbox runs with the override\'s cpus and memory, in place of the task\'s scaled ones', async () => {
    const dataset = writeDataset({
      'dataset.toml': '[gym.defaults]\nresource_multiplier = 2\n',
      'limits/task.toml': '[environment]\ndocker_image = "berth-base:bookworm"\ncpus = 1\nmemory_mb = 200\n[agent]\ntimeout_sec = 30\n[verifier]\ntimeout_sec = 30\n',
      'limits/instruction.md': 'nothing\n',
      'limits/solution/solve.sh': '#!/bin/bash\ntrue\n',
      'limits/tests/test.sh': REPORT_LIMITS,
    });
    const run = async (toml: string) => {
      const configFile = join(mkdtempSync(join(tmpdir(), 'berth-config-')), 'berth.toml');
      writeFileSync(configFile, toml);
      const handle = await startBatch({ dataset, configFile, resultsDir: mkdtempSync(join(tmpdir(), 'berth-res-')), taskQueue: cluster.taskQueue, client: cluster.client });
      return (await handle.wait()).rows[0]!;
    };
    const [overridden, scaled] = await Promise.all([run('[resources]\ncpus = 0.5\nmemory_mb = 300\n'), run('')]);
    expect(overridden).toMatchObject({ reward: 1, verifier_rewards: { cpus: 0.5, memory_mb: 300 } });
    // Without an override, the task's values times the multiplier: the override above is what made the difference.
    expect(scaled).toMatchObject({ reward: 1, verifier_rewards: { cpus: 2, memory_mb: 400 } });
  });
});
