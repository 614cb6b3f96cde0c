// Issue 37: the dataset's task_data.py validates every row before anything runs (NeMo Gym 0.7
// § 7, Typed fields), in a container and never on the host; each bad row is refused by id and field.
import { existsSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { checkTaskData } from '../../src/client/task-data.ts';
import { DatasetRefusal, loadDataset } from '../../src/task/index.ts';
import { ensurePydanticImage } from '../helpers/pydantic-image.ts';
import { writeDataset } from '../helpers/tasks.ts';

// Written as NeMo Gym's resources_servers/*/task_data.py are: a Pydantic model exported as TaskData.
const MODEL = [
  'from typing import Literal',
  'from pydantic import BaseModel, ConfigDict, Field',
  'class TaskData(BaseModel):',
  '    model_config = ConfigDict(extra="allow")',
  '    question: str',
  '    answer: int = Field(ge=0)',
  '    mode: Literal["exact", "loose"] = "exact"',
  '',
].join('\n');

const template = (rows: string, model = MODEL) => writeDataset({
  'task_data.py': model,
  'task.toml': '[environment]\ndocker_image = "berth-base:bookworm"\n[agent]\ntimeout_sec = 60\n',
  'instruction.template.md': 'What is {{ question }}?\n',
  'tests/test.sh': '#!/bin/bash\necho 1 > /logs/verifier/reward.txt\n',
  'tasks.jsonl': rows,
});

const silent = { warn: () => {} };

describe('task_data.py validates every row in a sandbox', () => {
  let image: string;
  beforeAll(async () => { image = await ensurePydanticImage(); }, 360_000);

  it('good rows pass; each bad row is refused by its id and field, and the rest stay', async () => {
    const root = template([
      '{"task_id": "ok1", "question": "1+1", "answer": 2}',
      '{"task_id": "neg", "question": "1-2", "answer": -1}',
      '{"task_id": "word", "task_data": {"question": "2+2", "answer": "four", "mode": "fuzzy"}}',
      '{"task_id": "ok2", "task_data": {"question": "3+3", "answer": 6, "note": "extra allowed"}}',
    ].join('\n'));
    const d = await loadDataset(root, { logger: silent });
    const checked = await checkTaskData(root, d.tasks, { image });
    expect(checked.tasks.map((t) => t.id)).toEqual(['ok1', 'ok2']);
    const byId = Object.fromEntries(checked.refused.map((r) => [r.task_id, r]));
    expect(Object.keys(byId).sort()).toEqual(['neg', 'word']);
    expect(byId.neg!.code).toBe('invalid_task_data');
    expect(byId.neg!.key).toBe('answer');
    expect(byId.neg!.message).toContain('the dataset\'s task_data.py rejects task "neg" (answer: Input should be greater than or equal to 0)');
    expect(byId.word!.message).toMatch(/rejects task "word" \(answer: Input should be a valid integer[^;]*; mode: Input should be 'exact' or 'loose'\)/);
    expect(byId.word!.message).toContain('docs/parameterized-and-publish.md');
  }, 120_000);

  it('the model runs in the container, not on the host: what it writes at import never reaches the host', async () => {
    const marker = `/tmp/berth-task-data-${randomBytes(6).toString('hex')}`;
    const root = template('{"task_id": "a", "question": "q", "answer": 1}\n', `open("${marker}", "w").write("ran")\n${MODEL}`);
    const d = await loadDataset(root, { logger: silent });
    const checked = await checkTaskData(root, d.tasks, { image });
    expect(checked.tasks.map((t) => t.id)).toEqual(['a']);
    expect(existsSync(marker)).toBe(false);
  }, 120_000);

  it('an image without pydantic refuses the dataset, naming task_data.py and the fix', async () => {
    const root = template('{"task_id": "a", "question": "q", "answer": 1}\n');
    const d = await loadDataset(root, { logger: silent });
    const err = await checkTaskData(root, d.tasks, { image: 'berth-base:bookworm' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DatasetRefusal);
    expect((err as DatasetRefusal).message).toContain(`${root}/task_data.py = "berth-base:bookworm": pydantic 2 is not importable in the image`);
    expect((err as DatasetRefusal).message).toContain('Fix: set BERTH_TASK_DATA_IMAGE to an image with python3 and pydantic 2');
  }, 120_000);

  it('a task_data.py that does not import, or exports no TaskData, refuses the dataset with the reason', async () => {
    const broken = template('{"task_id": "a", "question": "q", "answer": 1}\n', 'import not_a_module\n');
    const d1 = await loadDataset(broken, { logger: silent });
    await expect(checkTaskData(broken, d1.tasks, { image })).rejects.toThrow(/importing task_data.py failed: ModuleNotFoundError: No module named 'not_a_module'/);
    const empty = template('{"task_id": "a", "question": "q", "answer": 1}\n', 'X = 1\n');
    const d2 = await loadDataset(empty, { logger: silent });
    await expect(checkTaskData(empty, d2.tasks, { image })).rejects.toThrow(/task_data.py does not export TaskData/);
  }, 120_000);
});
