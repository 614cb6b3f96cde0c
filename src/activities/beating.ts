import { heartbeat } from '@temporalio/activity';

/** Heartbeats while a long call runs, so a dead host is noticed by its heartbeat timeout. */
export async function beating<T>(fn: () => Promise<T>): Promise<T> {
  const timer = setInterval(() => heartbeat(), 5000);
  try {
    return await fn();
  } finally {
    clearInterval(timer);
  }
}
