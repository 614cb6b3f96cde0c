import { ApplicationFailure } from '@temporalio/activity';

/** A seed that failed for good (unset variable, image missing): a masked row, never retried. */
export const seedFailure = (message: string): ApplicationFailure => ApplicationFailure.nonRetryable(message, 'harbor:seed_failed');
