import { describe, expect, it } from 'vitest';
import { temporal } from '@temporalio/proto';
import { Worker } from '@temporalio/worker';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { installRuntime, workflowBundle } from '../../src/worker.ts';
import { historiesDir, historyIds } from '../helpers/histories.ts';

// Stored histories of every workflow shape, replayed against the current code: a change that is
// not deterministic for a history already in production fails here. Re-record fixtures with
// BERTH_RECORD_HISTORIES=1 npx vitest run test/workflows/episode-mocked.test.ts test/e2e/hello.test.ts test/e2e/openai-durable.test.ts
// (one test at a time with -t, renaming what replaces an older shape: episode-hello-real and -v2 are from before
// patches episode-v2 and episode-v4, episode-hello-v4 after, episode-hello-v5 after episode-v5; batch-handover is a
// run that told its children to signal before continuing as new, fetched by its run id; episode-gatekey-v0 was
// recorded before the min-reward-key patch, episode-gatekey after; rollout-run-v0 is a rollout run (test/serve/rollout-policy.test.ts's
// stale run, fetched from the server) from before patch rollout-starts-together, rollout-run after; batch-together is a batch's last run after patch batch-starts-together (test/workflows/batch-control.test.ts,
// -t 'wider than the limit'); openai-turn is an openai turn from before patch openai-turn-in-one-activity (an activity per
// call), openai-turn-one after (one activity; test/e2e/openai-durable.test.ts records it, keep episode-openai as it was);
// regrade-separate and regrade-check are a regrade and its check on the host that ran the
// attempt (test/e2e/regrade.test.ts, before patch regrade-from-store), regrade-from-store (after patches regrade-from-store
// and regrade-stores-files) and regrade-check-from-store ones that stood in for a host that was gone
// (test/store/regrade-from-store.test.ts);
// episode-stored-v0 is a batch's episode with a results store from before patch store-beside-closing (the upload before
// the row closed, patch results-store), episode-stored after (test/workflows/episode-mocked.test.ts, -t 'results store');
// batch-stored is a batch with a results store after patch batch-job-files-in-store (its job files written by an activity
// at its end) whose episodes free their slots by signal, episode-stored-inline an episode after patch
// store-in-last-verify (its last verification frees the slot and uploads; episode-mocked.test.ts, -t 'starts the next
// episode'), batch-stored-continued a store batch's last run after continuing as new (-t 'writes its job files'), both
// from before patch batch-job-files-as-it-goes (no longer recorded); batch-stored-as-it-goes is a store batch after it
// (its job files written while it runs: -t 'while it runs') and batch-stored-as-it-goes-continued a continued run's
// (-t 'in each run after a continue-as-new');
// episode-k8s-v0 is examples/hello on the local Kubernetes cluster (a shared sandbox queue) from before patch
// cluster-seed-with-agent (seed and agentTurn apart), episode-k8s-seededagent after, episode-k8s-v6 after patch
// episode-v6 (one marker where it had two; test/kubernetes/episodes.test.ts, -t 'examples/hello'); episode-seededagent-v6
// a single-step episode after episode-v6 (episode-mocked.test.ts, -t 'under one patch marker'); episode-seededagent-v8 and
// episode-k8s-v8 after patch episode-v8 (the plan a local activity; the same two tests); episode-told-late-v0 is a batch's child told to report by signal after it had closed with its
// row, before patch report-told-late (it completed without the signal; fetched from CI's server, its batch
// berth/test-mocked-ea764e-b1 waited forever), episode-told-late one after (episode-mocked.test.ts, -t 'told to report');
// keep every shape).
describe('replaying stored histories (temporal-notes.md section 2, replay test)', () => {
  const files = readdirSync(historiesDir).filter((f) => f.endsWith('.binpb')).sort();

  it('has a history of each workflow shape', () => {
    for (const shape of ['episode-hello-real', 'episode-hello-v2', 'episode-mean3', 'episode-gate', 'episode-lost', 'episode-overlay', 'episode-slow', 'batch-continued', 'batch-steered', 'episode-openai', 'openai-turn', 'episode-planmasked', 'episode-limits', 'episode-hello-v4', 'episode-seededagent', 'episode-seededlost', 'episode-hello-v5', 'batch-continued-v5', 'batch-handover', 'episode-gatekey-v0', 'episode-gatekey', 'rollout-run-v0', 'rollout-run', 'batch-together', 'regrade-separate', 'regrade-check', 'regrade-from-store', 'regrade-check-from-store', 'openai-turn-one', 'episode-stored-v0', 'episode-stored', 'batch-stored', 'episode-stored-inline', 'batch-stored-continued', 'episode-k8s-v0', 'episode-k8s-seededagent', 'batch-stored-as-it-goes', 'batch-stored-as-it-goes-continued', 'episode-told-late-v0', 'episode-told-late', 'episode-k8s-v6', 'episode-seededagent-v6', 'episode-seededagent-v8', 'episode-k8s-v8']) {
      expect(files).toContain(`${shape}.binpb`);
    }
  });

  it('replays every one without a determinism error', async () => {
    installRuntime();
    const ids = historyIds();
    const histories = files.map((f) => ({ workflowId: ids[f.replace(/\.binpb$/, '')] ?? f, history: temporal.api.history.v1.History.decode(readFileSync(join(historiesDir, f))) }));
    const failures: string[] = [];
    for await (const result of Worker.runReplayHistories({ workflowBundle: await workflowBundle(), replayName: 'ci' }, histories)) {
      if (result.error) failures.push(`${result.workflowId}: ${result.error.message}`);
    }
    expect(failures).toEqual([]);
  });
});
