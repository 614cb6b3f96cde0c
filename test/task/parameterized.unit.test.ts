// Issue 37, parameterized tasks (NeMo Gym 0.7, Typed fields and Parameterized; NeMo Gym's
// nemo_gym.data.tasks.harbor.parameterized): a template folder with tasks.jsonl beside task.toml is rendered into
// one plain task folder per row, each with its own digest; bad rows are refused by id (or line) and field.
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { loadDataset, loadTask } from '../../src/task/index.ts';
import { renderText, renderedName, formatValue } from '../../src/task/parameterized/render.ts';
import { parseTemplateRows } from '../../src/task/parameterized/rows.ts';
import { renameTask } from '../../src/task/parameterized/task-name.ts';
import { silent, tempTree } from './helpers.ts';

const TEMPLATE: Record<string, string> = {
  'task.toml': '[task]\nname = "demo/template"\n[environment]\ndocker_image = "berth-base:bookworm"\n[agent]\ntimeout_sec = 60\n',
  'instruction.template.md': 'What is {{ task_data.question }}?\n',
  'solution/answer.template.md': '{{ answer }}\n',
  'tests/test.sh': '#!/bin/bash\necho 1 > /logs/verifier/reward.txt\n',
  'tests/.hidden-helper': 'kept\n',
  'README.md': 'describes the template\n',
  'tasks.jsonl': '{"task_id": "one", "task_data": {"question": "1+1", "answer": 2}}\n{"task_id": "two", "question": "2+2", "answer": 4}\n',
};

function tree(files: Record<string, string>): string {
  const t = tempTree(files);
  onTestFinished(t.cleanup);
  return t.root;
}

describe('rows of tasks.jsonl', () => {
  const cases: Array<[string, string, { ids?: string[]; problem?: RegExp; key?: string }]> = [
    ['nested task_data', '{"task_id": "a", "task_data": {"x": 1}}', { ids: ['a'] }],
    ['flat fields', '{"task_id": "a", "x": 1}', { ids: ['a'] }],
    ['blank lines skipped', '\n{"task_id": "a"}\n\n', { ids: ['a'] }],
    ['not JSON', '{task_id: a}', { problem: /line 1 is not JSON/ }],
    ['not an object', '[1]', { problem: /line 1 is not a JSON object/ }],
    ['no task_id', '{"x": 1}', { problem: /line 1 has no task_id/, key: 'task_id' }],
    ['a task_id that is no folder name', '{"task_id": "../x"}', { problem: /not a folder name/, key: 'task_id' }],
    ['task_data not an object', '{"task_id": "a", "task_data": 3}', { problem: /task_data is not a JSON object/, key: 'task_data' }],
    ['task_data and flat fields both', '{"task_id": "a", "task_data": {}, "x": 1}', { problem: /both task_data and fields beside it \(x\)/, key: 'x' }],
    ['a repeated task_id', '{"task_id": "a"}\n{"task_id": "a"}', { ids: ['a'], problem: /task_id "a" is also the id of line 1/ }],
  ];
  it.each(cases)('%s', (_n, text, want) => {
    const { rows, problems } = parseTemplateRows(text);
    if (want.ids) expect(rows.map((r) => r.taskId)).toEqual(want.ids);
    if (want.problem) expect(problems[0]?.problem).toMatch(want.problem);
    else expect(problems).toEqual([]);
    if (want.key) expect(problems[0]?.key).toBe(want.key);
  });

  it('flat and nested rows give the same fields', () => {
    const { rows } = parseTemplateRows('{"task_id": "a", "task_data": {"x": 1}}\n{"task_id": "b", "x": 1}');
    expect(rows[0]!.fields).toEqual(rows[1]!.fields);
  });
});

describe('rendering a template file', () => {
  it.each([
    ['solution/solve.template.sh', 'solution/solve.sh'],
    ['instruction.template.md', 'instruction.md'],
    ['environment/Dockerfile.template', 'environment/Dockerfile'],
    ['tests/test.sh', null],
    ['templates/x.md', null],
  ])('%s → %s', (rel, want) => expect(renderedName(rel)).toBe(want));

  it.each([
    ['{{ x }} and {{task_data.x}}', { x: 'a' }, 'a and a'],
    ['{{ n.inner }}', { n: { inner: 3 } }, '3'],
    ['{{ t }} {{ f }} {{ z }}', { t: true, f: false, z: null }, 'True False None'],
    ['{{ l }}', { l: [1, 'a'] }, '[1,"a"]'],
    ['no placeholders', {}, 'no placeholders'],
  ])('%j with %j', (text, fields, want) => expect(renderText(text, fields)).toEqual({ ok: true, text: want }));

  it('a missing field is refused, not rendered empty', () => {
    expect(renderText('{{ y }}', { x: 1 })).toMatchObject({ ok: false, problem: 'the row has no field "y" for "{{ y }}"' });
  });

  it('an expression or filter is refused, not left as is', () => {
    expect(renderText('{{ x | upper }}', { x: 'a' })).toMatchObject({ ok: false, problem: '"{{ x | upper }}" is not a field reference' });
  });

  it('numbers print as JSON gives them', () => expect(formatValue(2.5)).toBe('2.5'));

  it('[task].name becomes <org>/<task_id>; a template without one is unchanged', () => {
    expect(renameTask('[task]\nname = "org/tpl"\n[agent]\nname = "x"\n', 'a1')).toBe('[task]\nname = "org/a1"\n[agent]\nname = "x"\n');
    expect(renameTask('[agent]\ntimeout_sec = 1\n', 'a1')).toBe('[agent]\ntimeout_sec = 1\n');
  });
});

describe('a template folder in a dataset', () => {
  it('renders one task per row, with the row\'s fields as task_data.json and its own digest', async () => {
    const root = tree(Object.fromEntries(Object.entries(TEMPLATE).map(([k, v]) => [`tpl/${k}`, v])));
    const d = await loadDataset(root, { logger: silent });
    expect(d.refused).toEqual([]);
    expect(d.tasks.map((t) => t.id)).toEqual(['one', 'two']);
    const [one, two] = d.tasks;
    expect(one!.path).toBe(join(root, '.berth/rendered/tpl/one'));
    expect(one!.instruction).toBe('What is 1+1?\n');
    expect(two!.instruction).toBe('What is 2+2?\n');
    expect(one!.task_data).toEqual({ question: '1+1', answer: 2 });
    expect(one!.name).toBe('demo/one');
    expect(one!.solution.kind).toBe('answer_md');
    expect(readFileSync(join(one!.path, 'solution/answer.md'), 'utf8')).toBe('2\n');
    expect(readFileSync(join(one!.path, 'tests/.hidden-helper'), 'utf8')).toBe('kept\n');
    expect(existsSync(join(one!.path, 'README.md'))).toBe(false);
    expect(existsSync(join(one!.path, 'tasks.jsonl'))).toBe(false);
    expect(existsSync(join(one!.path, 'instruction.template.md'))).toBe(false);
    expect(statSync(join(one!.path, 'tests/test.sh')).mode & 0o777).toBe(statSync(join(root, 'tpl/tests/test.sh')).mode & 0o777);
    expect(one!.digest).not.toBe(two!.digest);
  });

  it('an episode loads a rendered task again by path, at the same digest', async () => {
    const root = tree(TEMPLATE);
    const d = await loadDataset(root, { logger: silent });
    const t = d.tasks.find((x) => x.id === 'two')!;
    expect(t.path).toBe(join(root, '.berth/rendered/two'));
    const again = await loadTask(t.path, { datasetRoot: root, logger: silent });
    expect(again.digest).toBe(t.digest);
  });

  it('an edited template reaches a task loaded again by path (retry, regrade), as a plain task\'s edits do', async () => {
    const root = tree(TEMPLATE);
    const t = (await loadDataset(root, { logger: silent })).tasks[0]!;
    writeFileSync(join(root, 'tests/test.sh'), '#!/bin/bash\necho 0.5 > /logs/verifier/reward.txt\n');
    const again = await loadTask(t.path, { datasetRoot: root, logger: silent });
    expect(readFileSync(join(t.path, 'tests/test.sh'), 'utf8')).toContain('0.5');
    expect(again.digest).not.toBe(t.digest);
  });

  it('loading twice leaves a rendered folder alone; an edited row changes only its task\'s digest', async () => {
    const root = tree(TEMPLATE);
    const first = await loadDataset(root, { logger: silent });
    const mtime = statSync(join(root, '.berth/rendered/one/instruction.md')).mtimeMs;
    const second = await loadDataset(root, { logger: silent });
    expect(second.tasks.map((t) => t.digest)).toEqual(first.tasks.map((t) => t.digest));
    expect(statSync(join(root, '.berth/rendered/one/instruction.md')).mtimeMs).toBe(mtime);
    writeFileSync(join(root, 'tasks.jsonl'), TEMPLATE['tasks.jsonl']!.replace('"2+2"', '"3+3"'));
    const third = await loadDataset(root, { logger: silent });
    expect(third.tasks[0]!.digest).toBe(first.tasks[0]!.digest);
    expect(third.tasks[1]!.digest).not.toBe(first.tasks[1]!.digest);
    expect(third.tasks[1]!.instruction).toBe('What is 3+3?\n');
  });

  it('a bad row is refused by id and placeholder while the others load', async () => {
    const root = tree({ ...TEMPLATE, 'tasks.jsonl': '{"task_id": "one", "question": "1+1", "answer": 2}\n{"task_id": "bad", "answer": 1}\nnot json\n' });
    const d = await loadDataset(root, { logger: silent });
    expect(d.tasks.map((t) => t.id)).toEqual(['one']);
    const byId = Object.fromEntries(d.refused.map((r) => [r.task_id, r]));
    expect(byId.bad!.code).toBe('parameterized_row');
    expect(byId.bad!.message).toContain(`${join(root, 'instruction.template.md')}: {{ task_data.question }} = "bad": row "bad" (tasks.jsonl line 2): the row has no field "question"`);
    expect(byId.bad!.message).toContain('docs/parameterized-and-publish.md');
    expect(byId[`${d.root.split('/').pop()}:tasks.jsonl:3`]!.message).toContain('line 3 is not JSON');
  });

  it('a rendered name beside the same plain file is refused, naming both', async () => {
    const root = tree({ ...TEMPLATE, 'instruction.md': 'plain\n' });
    const d = await loadDataset(root, { logger: silent });
    expect(d.tasks).toEqual([]);
    expect(d.refused[0]!.message).toContain('instruction.template.md renders to instruction.md, which the template also holds');
  });

  it('a rendered id is unique in the dataset like a folder name', async () => {
    const root = tree({
      ...Object.fromEntries(Object.entries(TEMPLATE).map(([k, v]) => [`tpl/${k}`, v])),
      'one/task.toml': '[environment]\ndocker_image = "x"\n', 'one/instruction.md': 'x\n', 'one/tests/test.sh': '#!/bin/bash\n',
    });
    const d = await loadDataset(root, { logger: silent });
    expect(d.refused.filter((r) => r.code === 'duplicate_task_id').map((r) => r.task_id)).toEqual(['one', 'one']);
    expect(d.tasks.map((t) => t.id)).toEqual(['two']);
  });

  it('the template folder loaded as one task is refused as a template', async () => {
    const root = tree(TEMPLATE);
    await expect(loadTask(root, { logger: silent })).rejects.toMatchObject({ code: 'parameterized_task' });
  });
});
