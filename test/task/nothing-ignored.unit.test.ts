// Issue 12, "nothing read and then ignored": every key the loader reads either acts, warns that it does not act
// yet, or refuses the task with the reason.
import { describe, expect, it } from 'vitest';
import { build, expectRefusal, expectTask, loadTempDataset as dataset, taskFiles } from './helpers.ts';

// docs/design.md section 7, Config file ([resources] overrides) and Effective values; Task Folder Format
// § [environment] ("the server's `sandbox_resources_override` replaces any it names").
describe('berth.toml [resources] is the resource override', () => {
  const TASK = [
    '[environment]', 'cpus = 1', 'memory_mb = 1000', 'storage_mb = 2048', 'gpus = 1',
    '[verifier.environment]', 'docker_image = "v:1"', 'cpus = 3', 'memory_mb = 300',
  ].join('\n');
  const rows: Array<[string, { cpus?: number; memory_mb?: number } | undefined, number, object, object]> = [
    ['no override: the task\'s values', undefined, 1, { cpus: 1, memory_mb: 1000 }, { cpus: 3, memory_mb: 300 }],
    ['cpus only: memory keeps the task\'s', { cpus: 0.5 }, 1, { cpus: 0.5, memory_mb: 1000 }, { cpus: 0.5, memory_mb: 300 }],
    ['memory only: cpus keep the task\'s', { memory_mb: 256 }, 1, { cpus: 1, memory_mb: 256 }, { cpus: 3, memory_mb: 256 }],
    ['both', { cpus: 2, memory_mb: 512 }, 1, { cpus: 2, memory_mb: 512 }, { cpus: 2, memory_mb: 512 }],
    ['after the multiplier: the override is the value, never scaled', { cpus: 2 }, 1.5, { cpus: 2, memory_mb: 1500 }, { cpus: 2, memory_mb: 450 }],
  ];
  it.each(rows)('%s', async (_name, resourceOverride, multiplier, agent, verifier) => {
    const d = await dataset({
      ...taskFiles('t', { 'task.toml': TASK, 'tests/Dockerfile': 'FROM x\n' }),
      'dataset.toml': `[gym.defaults]\nresource_multiplier = ${multiplier}\n`,
    }, { resourceOverride });
    const t = d.tasks[0]!;
    expect(t.environment).toMatchObject({ ...agent, storage_mb: Math.ceil(2048 * multiplier), gpus: 1 });
    expect(t.verifier.environment).toMatchObject(verifier);
  });

  it('does not change the digest (it is the operator\'s, not the dataset\'s)', async () => {
    const files = taskFiles('t', { 'task.toml': TASK, 'tests/Dockerfile': 'FROM x\n' });
    const plain = (await dataset(files)).tasks[0]!.digest;
    expect((await dataset(files, { resourceOverride: { cpus: 4 } })).tasks[0]!.digest).toBe(plain);
  });
});

// Delivered at seed since issue 13 (test/compose/mcp.test.ts): the loader reads them without a warning.
describe('mcp_servers and skills_dir load as declared (Task Folder Format § [environment])', () => {
  it('mcp_servers', () => {
    const warnings: string[] = [];
    const t = expectTask(build({ 'task.toml': '[[environment.mcp_servers]]\nname = "tools"\ntransport = "streamable-http"\nurl = "http://mcp:8000/mcp"\n' }, { warn: (m) => warnings.push(m) }));
    expect(t.environment.mcp_servers.map((s) => s.name)).toEqual(['tools']);
    expect(warnings).toEqual([]);
  });

  it('skills_dir, with environment/skills/ as what the seed uploads', () => {
    const warnings: string[] = [];
    const t = expectTask(build({ 'task.toml': '[environment]\nskills_dir = "skills"\n', 'environment/skills/a.md': 'x\n' }, { warn: (m) => warnings.push(m) }));
    expect(t.environment.skills_dir).toBe('skills');
    expect(t.skills_source).toBe('/data/demo/environment/skills');
    expect(warnings).toEqual([]);
  });
});

// Task Folder Format § Additional features ("Typed task fields and parameterized tasks") and § Task folder
// layout (the dataset root's task_data.py); a template folder is a task folder with tasks.jsonl beside task.toml and
// `<stem>.template<suffix>` files rendered per row.
describe('a template folder loaded as one task is refused as a template, not as a task missing instruction.md', () => {
  // Loading the dataset renders a template's rows (test/task/parameterized.unit.test.ts); these are the folders
  // that reach the task builder themselves.
  it('tasks.jsonl alone, beside an instruction.md, is a template too', () => {
    const r = expectRefusal(build({ 'tasks.jsonl': '{"task_id": "a"}\n' }));
    expect(r.code).toBe('parameterized_task');
  });

  it('instruction.template.md in place of instruction.md, without rows', () => {
    const r = expectRefusal(build({ 'instruction.md': undefined, 'instruction.template.md': 'x {{ y }}\n' }));
    expect(r.code).toBe('parameterized_task');
    expect(r.message).toContain('instruction.template.md is rendered only in a template folder, which has tasks.jsonl beside its task.toml');
    expect(r.file).toBe('/data/demo/instruction.template.md');
  });

  it('a task.toml with {{ }} placeholders is still named a template, not malformed TOML', () => {
    const r = expectRefusal(build({ 'task.toml': '[agent]\ntimeout_sec = {{ timeout }}\n', 'tasks.jsonl': '{"task_id": "a"}\n' }));
    expect(r.code).toBe('parameterized_task');
  });

  it('a plain task keeps loading, and the missing-instruction refusal is unchanged', () => {
    expectTask(build({}));
    expect(expectRefusal(build({ 'instruction.md': undefined })).code).toBe('missing_instruction');
  });

  it('task_data.py beside plain task folders: they load; the loader runs no model (the commands validate in a sandbox)', async () => {
    const warnings: string[] = [];
    const d = await dataset({ ...taskFiles('t', { 'task_data.json': '{"q": 1}' }), 'task_data.py': 'class TaskData: ...\n' }, { logger: { warn: (m) => warnings.push(m) } });
    expect(d.tasks.map((t) => t.id)).toEqual(['t']);
    expect(d.tasks[0]!.task_data).toEqual({ q: 1 });
    expect(warnings).toEqual([]);
  });
});
