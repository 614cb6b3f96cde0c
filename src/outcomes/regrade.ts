/** A regrade that cannot run (nothing kept to verify): the regrade workflow fails, and the graded attempt stays reported. */
export const REGRADE_REFUSED = 'berth:regrade_refused';
