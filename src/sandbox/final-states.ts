// A kept final state (`berth run --keep-final-state`) as every engine that can keep one describes it, and the
// retention period `berth gc` applies.

export const DEFAULT_RETENTION_DAYS = 7;

/** The retention period: the setting (BERTH_FINAL_STATE_RETENTION_DAYS, read by src/config/env.ts), else the default. */
export function retentionDays(setting: number | undefined): number {
  return setting ?? DEFAULT_RETENTION_DAYS;
}

export interface KeptState { image: string; batch: string; workflowId: string; runId: string; keptAt: string }

export interface GcSelection {
  /** Only this batch's images (whatever their age). */
  batch?: string;
  /** Only images kept longer ago than this many days; without batch or all, the retention period. */
  olderThanDays?: number;
  all?: boolean;
}
