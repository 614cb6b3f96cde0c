import { describe, expect, it } from 'vitest';
import { fetchFailure } from '../../src/agents/installed/packages.ts';

// What an agent's install says when a fetch on the host fails: the reason, even when the tool wrote nothing to stderr
// (npm --silent, a timeout), never an empty line.
describe('fetchFailure', () => {
  it.each([
    { name: 'stderr, its last lines', err: Object.assign(new Error('Command failed: npm pack x'), { stderr: `${'noise\n'.repeat(10)}npm error 404 Not Found\n` }), says: /failed on the host:\n(noise\n){7}npm error 404 Not Found$/ },
    { name: 'empty stderr: the message', err: Object.assign(new Error('Command failed: npm pack x --silent'), { stderr: '' }), says: /failed on the host:\nCommand failed: npm pack x --silent$/ },
    { name: 'blank stderr: the message', err: Object.assign(new Error('spawnSync npm ETIMEDOUT'), { stderr: ' \n' }), says: /failed on the host:\nspawnSync npm ETIMEDOUT$/ },
    { name: 'not an Error', err: 'plain words', says: /failed on the host:\nplain words$/ },
  ])('$name', ({ err, says }) => {
    const e = fetchFailure('npm pack x@1', err);
    expect(e.message).toMatch(says);
    expect(e.message.startsWith('npm pack x@1 failed on the host:\n')).toBe(true);
  });
});
