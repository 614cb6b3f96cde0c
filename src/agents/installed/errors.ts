/** An agent could not be installed into a task's image (no Python, a registry refusing, a failed build). */
export class AgentInstallFailed extends Error {
  override readonly name = 'AgentInstallFailed';
}
