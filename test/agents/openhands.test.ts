// The openhands installed agent end to end (issue 26), as test/agents/installed-more.test.ts does the others: its
// layer over examples/hello's image brings the CPython scripts/build-cpython.sh builds on this host (Python 3.13;
// the image has 3.11) and the CLI's wheels fetched on the host, then a real worker, engine and Temporal run it
// against the fake model server (Chat Completions), reached only through the gateway. A second episode starts
// from the layer. The first run on a host builds CPython (minutes); later ones reuse BERTH_HOME/tools. Its refusal
// of an image without glibc is in no-glibc.test.ts.
import { describe, expect, it } from 'vitest';
import { WRITE_HELLO } from './fake-vendors.ts';
import { expectLayerReused, expectScoresThroughGateway, helloDataset, useInstalledWorld } from './installed-run.ts';

const hello = helloDataset();
const REAL_KEY = 'sk-berth-test-REAL-0a1e5c2f6d7b4e39';
// Building CPython once per host on a loaded 2-core machine, then the layer.
const INSTALL_TIMEOUT = 3_000_000;
const MODEL = 'openai/gpt-4.1-mini';

const world = useInstalledWorld('openhands', REAL_KEY);

describe('openhands installed into a layer with its own Python, on examples/hello', () => {
  it('scores 1 through the gateway: the usage the model reported, its terminal call in the ATIF transcript, and no key in the sandbox', () =>
    expectScoresThroughGateway(world, hello, REAL_KEY, {
      agent: 'openhands', model: MODEL, path: '/v1/chat/completions',
      call: { function_name: 'terminal', arguments: expect.objectContaining({ command: WRITE_HELLO }) as Record<string, unknown> },
    }), INSTALL_TIMEOUT);

  it('a second episode starts from the layer: no install activity in its history', () => expectLayerReused(world, hello, 'openhands', MODEL), INSTALL_TIMEOUT);
});
