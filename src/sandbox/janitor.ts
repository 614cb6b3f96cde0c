// The janitor, written once on the driver: every sandbox and group carrying Berth's workflow label whose episode no
// longer runs is removed (a group whole); a liveness question that fails keeps the sandbox, saying why.
import type { SandboxDriver } from './driver.ts';
import { LABEL_WORKFLOW } from './names.ts';
import type { JanitorOptions, JanitorReport } from './types.ts';

export async function runJanitor(driver: Pick<SandboxDriver, 'listByLabel' | 'remove'>, options: JanitorOptions): Promise<JanitorReport> {
  const report: JanitorReport = { removed: [], kept: [] };
  // One question per workflow, however many of its sandboxes there are.
  const liveness = new Map<string, Promise<boolean>>();
  for (const s of await driver.listByLabel([LABEL_WORKFLOW])) {
    const { name, workflowId } = s;
    if (!liveness.has(workflowId)) liveness.set(workflowId, options.isLive(workflowId));
    let live: boolean;
    try {
      live = await liveness.get(workflowId)!;
    } catch (err) {
      report.kept.push({ name, workflowId, reason: `could not tell whether it is live: ${(err as Error).message}` });
      continue;
    }
    if (live) {
      report.kept.push({ name, workflowId, reason: 'episode is running' });
      continue;
    }
    const { removed } = await driver.remove(s);
    if (removed || s.kind === 'group') report.removed.push({ name, workflowId });
  }
  return report;
}
