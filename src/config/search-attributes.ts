// docs/design.md section 4: Berth's search attributes, defined once. The workflows set them, the client lists by them and
// the server registers them (within the dev server's SQLite slots). Pure: workflow code imports this file too.
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

export const BERTH_BATCH = defineSearchAttributeKey('BerthBatch', SearchAttributeType.KEYWORD);
export const BERTH_TASK = defineSearchAttributeKey('BerthTask', SearchAttributeType.KEYWORD);
export const BERTH_DATASET = defineSearchAttributeKey('BerthDataset', SearchAttributeType.KEYWORD);
export const BERTH_AGENT = defineSearchAttributeKey('BerthAgent', SearchAttributeType.KEYWORD);
export const BERTH_OUTCOME = defineSearchAttributeKey('BerthOutcome', SearchAttributeType.KEYWORD);
export const BERTH_FAILURE_KIND = defineSearchAttributeKey('BerthFailureKind', SearchAttributeType.KEYWORD);
export const BERTH_REWARD = defineSearchAttributeKey('BerthReward', SearchAttributeType.DOUBLE);
export const BERTH_TURN = defineSearchAttributeKey('BerthTurn', SearchAttributeType.INT);

export type Outcome = 'running' | 'scored' | 'masked' | 'failed';

const KEYS = [BERTH_BATCH, BERTH_TASK, BERTH_DATASET, BERTH_AGENT, BERTH_OUTCOME, BERTH_FAILURE_KIND, BERTH_REWARD, BERTH_TURN];
const TYPE_NAMES = { [SearchAttributeType.KEYWORD]: 'Keyword', [SearchAttributeType.DOUBLE]: 'Double', [SearchAttributeType.INT]: 'Int' } as const;

/** Each attribute's name and type as the Temporal CLI and operator service name them. */
export const SEARCH_ATTRIBUTE_TYPES: Record<string, 'Keyword' | 'Double' | 'Int'> = Object.fromEntries(
  KEYS.map((k) => [k.name, TYPE_NAMES[k.type as keyof typeof TYPE_NAMES]]),
);

/**
 * Columns per type in SQL visibility (PostgreSQL 12+, MySQL 8; schema/postgresql/v12/visibility/schema.sql of the
 * Temporal server): a namespace can hold at most this many custom attributes of each type. Berth's must fit.
 */
export const SQL_VISIBILITY_COLUMNS: Record<'Keyword' | 'Double' | 'Int', number> = { Keyword: 10, Int: 3, Double: 3 };
