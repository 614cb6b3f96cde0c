/** Whether a process of this machine with this pid runs (or is a zombie not yet reaped). */
export function alive(pid: number | undefined): pid is number {
  if (pid === undefined) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
