import { describe, expect, it } from 'vitest';
import { SEARCH_ATTRIBUTE_TYPES, SQL_VISIBILITY_COLUMNS } from '../../src/config/search-attributes.ts';
import { missingAttributes, refusalMessage } from '../../src/server/search-attributes.ts';

describe('Berth\'s search attributes on a cluster', () => {
  it('fit the columns SQL visibility has per type, with room left for the team\'s own', () => {
    const used = { Keyword: 0, Int: 0, Double: 0 };
    for (const type of Object.values(SEARCH_ATTRIBUTE_TYPES)) used[type] += 1;
    for (const [type, n] of Object.entries(used)) expect(n, type).toBeLessThan(SQL_VISIBILITY_COLUMNS[type as keyof typeof used]);
  });

  it.each([
    [{}, Object.keys(SEARCH_ATTRIBUTE_TYPES)],
    [Object.fromEntries(Object.keys(SEARCH_ATTRIBUTE_TYPES).map((k) => [k, 2])), []],
    [{ BerthBatch: 2, TeamCost: 4 }, Object.keys(SEARCH_ATTRIBUTE_TYPES).filter((k) => k !== 'BerthBatch')],
  ])('missing from %j: %j', (existing, missing) => {
    expect(missingAttributes(existing).map(([name]) => name)).toEqual(missing);
  });

  it('a refusal names each attribute, its type, the server\'s reason, the fix and the page', () => {
    const one = refusalMessage('t:7233', 'ns', [{ name: 'BerthReward', type: 'Double', reason: 'too many Double' }]);
    expect(one.split('\n').slice(0, 2)).toEqual([
      'Temporal at t:7233 refused one of Berth\'s search attributes in namespace ns:',
      '  BerthReward (Double): too many Double',
    ]);
    expect(one).toContain('temporal operator search-attribute remove --namespace ns');
    expect(one).toContain('docs/deployment.md');
    const two = refusalMessage('t:7233', 'ns', [{ name: 'A', type: 'Int', reason: 'x' }, { name: 'B', type: 'Int', reason: 'y' }]);
    expect(two).toMatch(/^Temporal at t:7233 refused 2 of Berth's search attributes/);
  });
});
