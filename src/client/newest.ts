/** The newest attempt of each (task, repeat) is the one reported (docs/design.md section 3, Retry). */
export function newestOf<T>(items: readonly T[], id: (t: T) => { task: string; repeat: number; attempt: number }): T[] {
  const best = new Map<string, T>();
  for (const item of items) {
    const { task, repeat, attempt } = id(item);
    const key = `${task}\0${repeat}`;
    const cur = best.get(key);
    if (!cur || attempt > id(cur).attempt) best.set(key, item);
  }
  return [...best.values()].sort((a, b) => id(a).task.localeCompare(id(b).task) || id(a).repeat - id(b).repeat);
}
