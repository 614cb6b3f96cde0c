import { Connection } from '@temporalio/client';
import { SEARCH_ATTRIBUTE_TYPES } from '../config/search-attributes.ts';

const TYPE_CODES = { Keyword: 2, Int: 3, Double: 4 } as const;

/** On a cluster Berth did not start, register whichever of Berth's search attributes are missing. */
export async function ensureSearchAttributes(address: string, namespace = 'default'): Promise<string[]> {
  const connection = await Connection.connect({ address });
  try {
    const existing = await connection.operatorService.listSearchAttributes({ namespace });
    const missing = Object.entries(SEARCH_ATTRIBUTE_TYPES).filter(([name]) => !(name in (existing.customAttributes ?? {})));
    if (missing.length > 0) {
      await connection.operatorService.addSearchAttributes({
        namespace,
        searchAttributes: Object.fromEntries(missing.map(([name, type]) => [name, TYPE_CODES[type]])),
      });
    }
    return missing.map(([name]) => name);
  } finally {
    await connection.close();
  }
}
