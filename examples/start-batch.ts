// A client script: run the oracle over every task under examples/ and print the mean reward.
// Run it with: node --import tsx examples/start-batch.ts   (after `npx berth server start`)
import { startBatch } from '../src/client/index.ts';

const batch = await startBatch({ dataset: new URL('.', import.meta.url).pathname, agent: 'oracle', repeats: 1, concurrency: 4 });
console.log(`batch ${batch.batchId}: ${batch.uiLink}`);
const summary = await batch.wait((row) => console.log(`  ${row.task_id} #${row.repeat}: ${row.mask_sample ? `masked (${row.failure_kind})` : row.reward}`));
console.log(`mean reward ${summary.metrics.mean_reward} over ${summary.metrics.scored} scored episodes (${summary.metrics.masked} masked)`);
console.log(`rows: ${summary.resultsDir}/rollouts.jsonl`);
await batch.close();
